--[[ job_submit_cases.lua — src/integrations/slurm/job_submit.lua as slurmctld calls it, without
slurmctld: a stand-in `slurm` table records what the filter tells the user, and each case gives
convgpu_job_submit a job_desc with the spank environment a client would send. This is where a
client without the SPANK plugin is played (it can send anything), which the cluster tests cannot
do: their srun/sbatch load the plugin, which refuses bad values before slurmctld sees them.
Run by test_job_submit.c with slurmctld's Lua (5.1); JOB_SUBMIT_LUA names the filter. ]]

local said
slurm = { SUCCESS = 0, ERROR = -1,
          log_user = function(fmt, ...) said = string.format(fmt, ...) end }
dofile(assert(os.getenv("JOB_SUBMIT_LUA"), "JOB_SUBMIT_LUA not set"))

local fails = 0
local function expect(ok, what)
   if not ok then
      fails = fails + 1
      io.stderr:write("FAILED: " .. what .. "\n")
   end
end

local function submit(opts, tres)
   local env = {}
   for k, v in pairs(opts) do
      table.insert(env, "_SLURM_SPANK_OPTION_convgpu_" .. k .. "=" .. v)
   end
   local job = { spank_job_env = env, tres_per_node = tres }
   said = nil
   return convgpu_job_submit(job), job.tres_per_node, said
end

local function accepted(opts, want, tres)
   local rc, got, msg = submit(opts, tres)
   local what = "accepted " .. tostring(want)
   expect(rc == slurm.SUCCESS and got == want and msg == nil,
          what .. ": rc " .. rc .. ", tres " .. tostring(got) .. ", said " .. tostring(msg))
end

local function refused(opts, pattern)
   local rc, got, msg = submit(opts)
   expect(rc == slurm.ERROR and msg ~= nil and string.find(msg, pattern, 1, true) ~= nil
          and got == nil,
          "refused with '" .. pattern .. "': rc " .. rc .. ", said " .. tostring(msg))
end

-- Nothing asked: untouched.
accepted({}, nil)
-- One GPU, as before --gpu-count existed.
accepted({ gpu_mem = "1.5GiB" }, "gres:gpumem:1536")
accepted({ gpu_mem = "1GiB", gpu_compute = "30" }, "gres:gpumem:1024,gres:gpucompute:30")
accepted({ gpu_mem = "1GiB", gpu_count = "1" }, "gres:gpumem:1024")
-- N GPUs on each node, each with the whole limit and share: N times the GRES.
accepted({ gpu_mem = "1.5GiB", gpu_compute = "30", gpu_count = "2" },
         "gres:gpumem:3072,gres:gpucompute:60")
accepted({ gpu_mem = "100MiB", gpu_count = "64" }, "gres:gpumem:6400")
accepted({ gpu_mem = "1MiB", gpu_count = "4" }, "cpu:1,gres:gpumem:4", "cpu:1")
-- A malformed count, as a client without the plugin could send it.
for _, bad in ipairs({ "0", "65", "-1", "+2", "2.0", "2x", " 2", "", "two", "1e1", "0064" }) do
   refused({ gpu_mem = "1GiB", gpu_count = bad }, "--gpu-count=" .. bad .. ":")
end
refused({ gpu_count = "2" }, "--gpu-count needs --gpu-mem")
refused({ gpu_compute = "30" }, "--gpu-compute needs --gpu-mem")
-- The other options' refusals, unchanged.
refused({ gpu_mem = "abc", gpu_count = "2" }, "--gpu-mem=abc:")
refused({ gpu_mem = "1GiB", gpu_compute = "101", gpu_count = "2" }, "--gpu-compute=101:")

if fails > 0 then error(fails .. " case(s) failed") end
print("slurm.job_submit: ok")
