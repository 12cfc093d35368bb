/* test_job_submit.c — runs job_submit_cases.lua (the job_submit.lua filter's cases) in the Lua
 * that slurmctld's job_submit/lua plugin uses, 5.1 on Debian 12, without slurmctld. The library
 * is loaded with dlopen so that the test needs no Lua headers; where it is missing (no Slurm
 * installed) the test skips with exit 77, as the cluster tests do.
 *
 * Usage: test_job_submit CASES.lua (JOB_SUBMIT_LUA in the environment names the filter). */
#include <dlfcn.h>
#include <stdio.h>

typedef struct lua_State lua_State;

#define LUA_SKIP 77

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_job_submit CASES.lua\n");
        return 1;
    }
    void *lua = dlopen("liblua5.1.so.0", RTLD_NOW);
    if (!lua) {
        printf("SKIP: %s (slurmctld's Lua; Debian: liblua5.1-0, with slurmctld)\n", dlerror());
        return LUA_SKIP;
    }
    lua_State *(*newstate)(void) = (lua_State * (*)(void)) dlsym(lua, "luaL_newstate");
    void (*openlibs)(lua_State *) = (void (*)(lua_State *))dlsym(lua, "luaL_openlibs");
    int (*loadfile)(lua_State *, const char *) =
        (int (*)(lua_State *, const char *))dlsym(lua, "luaL_loadfile");
    int (*pcall)(lua_State *, int, int, int) =
        (int (*)(lua_State *, int, int, int))dlsym(lua, "lua_pcall");
    const char *(*tolstring)(lua_State *, int, size_t *) =
        (const char *(*)(lua_State *, int, size_t *))dlsym(lua, "lua_tolstring");
    void (*close_state)(lua_State *) = (void (*)(lua_State *))dlsym(lua, "lua_close");
    if (!newstate || !openlibs || !loadfile || !pcall || !tolstring || !close_state) {
        fprintf(stderr, "liblua5.1.so.0 lacks a function of the Lua 5.1 API\n");
        return 1;
    }
    lua_State *L = newstate();
    if (!L) {
        fprintf(stderr, "luaL_newstate failed\n");
        return 1;
    }
    openlibs(L);
    int rc = loadfile(L, argv[1]);
    if (rc == 0)
        rc = pcall(L, 0, 0, 0);
    if (rc != 0) {
        const char *msg = tolstring(L, -1, NULL);
        fprintf(stderr, "%s\n", msg ? msg : "(error without a message)");
    }
    close_state(L);
    dlclose(lua);
    return rc == 0 ? 0 : 1;
}
