/* nvml_info.c — the device facts tools read from NVML: PCI location, minor number, compute
 * capability, temperature, power and clocks. The emulated device is an A100 (PCI device
 * 0x20B0 of vendor 0x10DE) on domain 0, bus = index + 1, as cuDeviceGetPCIBusId reports.
 * Sensors follow the device's utilisation in the last sample period, so they move when
 * kernels run: temperature 30 C idle to 70 C busy, power 50 W to 400 W (its board limit).
 * Clocks are the fixed application clocks the driver's attributes report. */
#include "nvml_int.h"

#include <stdio.h>
#include <string.h>

_Static_assert(sizeof(nvmlPciInfo_t) == 68, "NVML's PCI info layout");

#define EMU_PCI_DEVICE_ID    0x20B010DEu /* device 0x20B0, vendor 0x10DE */
#define EMU_PCI_SUBSYSTEM_ID 0x134F10DEu

static nvmlReturn_t pci_info(nvmlDevice_t d, nvmlPciInfo_t *pci)
{
    emu_config cfg;
    unsigned i;
    nvmlReturn_t rc = emu_nvml_device(d, &cfg, &i);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!pci)
        return NVML_ERROR_INVALID_ARGUMENT;
    memset(pci, 0, sizeof *pci);
    pci->domain = 0;
    pci->bus = i + 1;
    pci->device = 0;
    pci->pciDeviceId = EMU_PCI_DEVICE_ID;
    pci->pciSubSystemId = EMU_PCI_SUBSYSTEM_ID;
    snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04X:%02X:%02X.0", pci->domain,
             pci->bus, pci->device);
    snprintf(pci->busId, sizeof pci->busId, "%08X:%02X:%02X.0", pci->domain, pci->bus,
             pci->device);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *pci)
{
    return pci_info(d, pci);
}

nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t d, nvmlPciInfo_t *pci)
{
    return pci_info(d, pci);
}

nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t d, unsigned int *minorNumber)
{
    emu_config cfg;
    unsigned i;
    nvmlReturn_t rc = emu_nvml_device(d, &cfg, &i);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!minorNumber)
        return NVML_ERROR_INVALID_ARGUMENT;
    *minorNumber = i; /* /dev/nvidia<i> */
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t d, int *major, int *minor)
{
    emu_config cfg;
    unsigned i;
    nvmlReturn_t rc = emu_nvml_device(d, &cfg, &i);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!major || !minor)
        return NVML_ERROR_INVALID_ARGUMENT;
    *major = 8;
    *minor = 0;
    return NVML_SUCCESS;
}

/* Busy percent of device d in the last period, for the sensors. */
static nvmlReturn_t busy(nvmlDevice_t d, unsigned *pct)
{
    emu_config cfg;
    unsigned i;
    nvmlReturn_t rc = emu_nvml_device(d, &cfg, &i);
    if (rc != NVML_SUCCESS)
        return rc;
    return emu_shared_utilization(&g_nvml.sh, i, pct) == 0 ? NVML_SUCCESS : NVML_ERROR_UNKNOWN;
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, nvmlTemperatureSensors_t sensorType,
                                      unsigned int *temp)
{
    unsigned pct;
    nvmlReturn_t rc = busy(d, &pct);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!temp || sensorType != NVML_TEMPERATURE_GPU)
        return NVML_ERROR_INVALID_ARGUMENT;
    *temp = 30 + pct * 40 / 100;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int *power)
{
    unsigned pct;
    nvmlReturn_t rc = busy(d, &pct);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!power)
        return NVML_ERROR_INVALID_ARGUMENT;
    *power = 50000 + pct * 3500; /* milliwatts */
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, nvmlClockType_t type, unsigned int *clock)
{
    emu_config cfg;
    unsigned i;
    nvmlReturn_t rc = emu_nvml_device(d, &cfg, &i);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!clock)
        return NVML_ERROR_INVALID_ARGUMENT;
    switch (type) {
    case NVML_CLOCK_GRAPHICS:
    case NVML_CLOCK_SM: *clock = 1410; break; /* MHz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE */
    case NVML_CLOCK_MEM: *clock = 1215; break;
    case NVML_CLOCK_VIDEO: *clock = 1275; break;
    default: return NVML_ERROR_INVALID_ARGUMENT;
    }
    return NVML_SUCCESS;
}
