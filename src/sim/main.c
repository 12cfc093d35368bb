/* main.c — convgpu-sim, a test-only executable running `convgpu sim` without the full CLI. */
#include "sim.h"

int main(int argc, char **argv)
{
    return cg_sim_main(argc, argv);
}
