--[[ job_submit.lua — slurmctld's half of convgpu's Slurm integration: --gpu-mem, --gpu-compute
and --gpu-count (the SPANK plugin's options) become requests for the consumable GRES `gpumem`
(MiB) and `gpucompute` (percent of one GPU), counted per node, so that a job that asks more than
a node has free waits in the queue (Reason=Resources) instead of starting and waiting inside the
node, and the user writes one request, not two to keep in step.

Path of one job: sbatch/srun/salloc checks the values (the SPANK plugin in the client) and
sends them as _SLURM_SPANK_OPTION_convgpu_gpu_mem=SIZE (and ..._gpu_compute=PCT,
..._gpu_count=N) in the job's spank environment; this filter checks them again (a client without
the plugin can send anything), adds gres:gpumem:MiB (rounded up) and gres:gpucompute:PCT, each
times N (the step has N GPUs on each node, each with the whole limit and share), to the job's
per-node TRES, and refuses a job that also names gpumem/gpucompute itself. Each node's counts
come from `convgpu slurm gres-conf` (summed over its GPUs).

Install: copy to the directory of slurm.conf as job_submit.lua (or call
convgpu_job_submit(job_desc) from the one you have) and set JobSubmitPlugins=lua. ]]

local MIB = 1048576
local units = { [""] = 1, b = 1, k = 1024, kb = 1024, kib = 1024,
                m = MIB, mb = MIB, mib = MIB, g = MIB * 1024, gb = MIB * 1024, gib = MIB * 1024,
                t = MIB * MIB, tb = MIB * MIB, tib = MIB * MIB }

-- convgpu's sizes (src/common/size.c): digits, an optional fraction, a binary suffix.
-- Returns whole MiB rounded up, or nil and why.
local function size_mib(text)
   local num, suffix = string.match(text, "^(%d+%.?%d*)(%a*)$")
   if not num then return nil, "not a size" end
   local mult = units[string.lower(suffix)]
   if not mult then return nil, "unknown unit '" .. suffix .. "'" end
   local bytes = tonumber(num) * mult
   if bytes ~= bytes or bytes <= 0 then return nil, "a limit must be more than 0 bytes" end
   if bytes > 2 ^ 53 then return nil, "too large" end
   return math.ceil(bytes / MIB)
end

local function spank_option(job_desc, name)
   local env = job_desc.spank_job_env
   if env == nil then return nil end
   local key = "_SLURM_SPANK_OPTION_convgpu_" .. name .. "="
   for _, v in pairs(env) do
      if string.sub(v, 1, #key) == key then return string.sub(v, #key + 1) end
   end
   return nil
end

function convgpu_job_submit(job_desc)
   local mem = spank_option(job_desc, "gpu_mem")
   local pct = spank_option(job_desc, "gpu_compute")
   local count = spank_option(job_desc, "gpu_count")
   if mem == nil and pct == nil and count == nil then return slurm.SUCCESS end
   if mem == nil then
      slurm.log_user("convgpu: --%s needs --gpu-mem", pct and "gpu-compute" or "gpu-count")
      return slurm.ERROR
   end
   local n = 1
   if count ~= nil then
      n = tonumber(string.match(count, "^%d%d?%d?$") or "")
      if n == nil or n < 1 or n > 64 then
         slurm.log_user("convgpu: --gpu-count=%s: a number of GPUs on each node, 1 to 64", count)
         return slurm.ERROR
      end
   end
   local mib, why = size_mib(mem)
   if not mib then
      slurm.log_user("convgpu: --gpu-mem=%s: %s", mem, why)
      return slurm.ERROR
   end
   local tres = job_desc.tres_per_node
   if tres ~= nil and (string.find(tres, "gpumem", 1, true) or
                       string.find(tres, "gpucompute", 1, true)) then
      slurm.log_user("convgpu: give --gpu-mem/--gpu-compute only; they request gres " ..
                     "gpumem/gpucompute themselves")
      return slurm.ERROR
   end
   local add = "gres:gpumem:" .. mib * n
   if pct ~= nil then
      local p = tonumber(string.match(pct, "^(%d+)%%?$") or "")
      if p == nil or p < 1 or p > 100 then
         slurm.log_user("convgpu: --gpu-compute=%s: a whole percent, 1 to 100", pct)
         return slurm.ERROR
      end
      add = add .. ",gres:gpucompute:" .. p * n
   end
   if tres == nil or tres == "" then job_desc.tres_per_node = add
   else job_desc.tres_per_node = tres .. "," .. add end
   return slurm.SUCCESS
end

function slurm_job_submit(job_desc, part_list, submit_uid)
   return convgpu_job_submit(job_desc)
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
   return slurm.SUCCESS
end
