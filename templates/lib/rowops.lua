-- lib/rowops.lua: what the row-wise ops (rmsnorm, softmax, cross_entropy)
-- share: their parameter space, the dispatch metadata, and the CUDA prelude
-- (types, vector access, reductions) that every variant file carries.
local dtypes = require "lib.dtypes"
local ptx = require "lib.ptx"
local launch = require "lib.launch"

local M = {}

-- One row is handled by `threads` threads (a whole number of warps); a CTA
-- holds `rows` rows.  Each thread makes `nv` accesses per chunk of the row,
-- each access `vec` elements wide (16 bytes, or one element for the
-- alignment-free fallback).  mode "reg" keeps the whole row in registers
-- (N <= one chunk: read once); mode "loop" streams the row in chunks.  Ops
-- with an output pass (two_pass) read the row again there: the first `cache`
-- chunks from shared memory, where the first pass left them, the rest from
-- global memory (L2 holds much of it).  mode "bulk" holds one chunk per row
-- like "reg", but the row (each operand the op stages: x, and dy or the
-- residual) arrives in shared memory by bulk copies (1-D TMA) issued `pipe`
-- row blocks ahead: bytes in flight cost shared memory, not registers.  mode
-- "stream" is "loop" with x's chunks arriving the same way, `pipe` chunks
-- ahead across row boundaries.
M.THREAD_COUNTS = { 32, 64, 128, 256, 512, 1024 }
M.CTA_THREADS = 256   -- the CTA of every variant of rows up to 256 threads...
M.SMALL_CTA = 128     -- ...but resident rows, which may also take half as many (more CTAs
                      -- per SM, a shorter tail; measured by make tune, picked by its rules)
-- Longest row: element indices (int in the kernels) stay clear of overflow
-- even one chunk past the end.
M.N_MAX = 1 << 30

function M.axes()
  return {
    dtype = { "bf16", "f16", "f32" },
    mode = { "reg", "loop", "bulk", "stream" },
    threads = M.THREAD_COUNTS,
    rows = { 1, 2, 4, 8 },
    nv = { 1, 2, 3, 4, 8 },   -- 3: rows of 1.5 * 2^k alone (three_ok); 8: wide cluster rows alone (wide_ok)
    access = { "v16", "e1" },
    cache = { 0, 3, 6 },
    pipe = { 1, 2, 4 },
    cluster = { 1, 2, 4, 8, 16 },
    split = { 0, 1, 2, 4 },   -- chunks of a streaming row one CTA takes (0: the whole row)
  }
end

M.SMEM_LIMIT = 227 * 1024
M.STATIC_SMEM_LIMIT = 48 * 1024   -- what a kernel may declare statically
M.CACHE_BYTES = 96 * 1024    -- the row cache of a streaming variant: two CTAs fit an SM

-- Elements per access for a point.
function M.vec(p)
  if p.access == "e1" then return 1 end
  return 16 // dtypes[p.dtype].size
end

-- Resident rows in registers.  One row block per CTA (pipe 1): one-warp
-- rows of 1, 2 or 4 accesses, wider rows of 2 or 4; 1024-thread rows take
-- the accesses a streaming thread would.  Pipelined (pipe 2): 2 accesses (one
-- on a one-warp row), the next block's in flight beside them.
local function ladder_ok(p, opts)
  if p.cluster > 1 then return true end   -- cluster_ok has the shape
  if p.pipe > 1 then return p.nv == (p.threads == 32 and 1 or 2) end
  if p.threads == 32 then return true end
  if p.threads == 1024 then return p.nv == 4 // opts.stream_operands end
  return p.nv >= 2
end

-- Bytes of row data a resident thread holds in registers at once: its
-- accesses, twice when pipelined (other operands wait in shared memory).
function M.footprint(p)
  return p.pipe * p.nv * M.vec(p) * dtypes[p.dtype].size
end

-- Threads per SM the register cap aims at: 1536 (40 registers) when a thread
-- holds at most 32 bytes and a CTA at most 4 rows, else 1024 (64); both keep
-- enough bytes in flight, neither spills.
function M.occupancy(p, opts)
  if p.nv == 8 then return M.WIDE_THREADS end
  local co = opts.cluster_occupancy
  if p.cluster > 1 and co then return type(co) == "function" and co(p) or co end
  if M.staged(p) then return M.STAGED_THREADS end
  local o = opts.occupancy
  if o then return type(o) == "function" and o(p) or o end
  return (M.footprint(p) <= 32 and p.rows <= 4) and 1536 or 1024
end

-- Modes whose rows arrive by bulk copies into shared-memory stages.
function M.staged(p) return p.mode == "bulk" or p.mode == "stream" end

-- Modes that hold one chunk per row (the whole row).
function M.resident(p) return p.mode == "reg" or p.mode == "bulk" end

-- Shared memory of the weight rows a resident variant keeps (opts.shared_w:
-- the number of such rows, w and b for layernorm), one slot per access.
function M.weight_smem(p, opts)
  if not (opts.shared_w and M.resident(p)) then return 0 end
  return p.nv * p.threads * p.rows * 16 * opts.shared_w
end

-- Operands a staged variant copies into each stage: the op's staged rows
-- for bulk rows, x alone for streamed ones.
function M.staged_ops(p, opts)
  return p.mode == "bulk" and #opts.staged or 1
end

-- Dynamic shared memory: the row cache of a streaming variant, the stages of
-- a staged one (pipe stages of `rows` rows of each staged operand, the CTA's
-- part of a chunk each), and the weight rows of an op that keeps them there
-- (opts.dynamic_w).
function M.smem(p, opts)
  local bytes = p.cache * p.threads * p.nv * 16
  if M.staged(p) then
    bytes = bytes + p.pipe * p.rows * M.staged_ops(p, opts) * p.threads * p.nv * M.vec(p) * dtypes[p.dtype].size
  end
  if opts and opts.dynamic_w then bytes = bytes + M.weight_smem(p, opts) end
  return bytes
end

-- Static shared memory a variant declares, bounded from above: the reduction
-- scratch and barriers (1 KB), a cluster row's exchange, and the weight rows
-- unless they are dynamic.
function M.static_smem(p, opts)
  local xchg = p.cluster > 1 and 16 + 8 * p.cluster + p.threads * p.rows // 8 or 0   -- cluster_combine's
  return 1024 + xchg + (opts.dynamic_w and 0 or M.weight_smem(p, opts))
end

M.SM_SMEM = 228 * 1024       -- shared memory of one SM, 1 KB of it reserved per CTA
M.STAGED_THREADS = 1024      -- threads per SM a staged variant aims at (64 registers)
M.WIDE_THREADS = 512         -- threads per SM of a wide cluster row (128 registers: 32 hold its slice)

-- CTAs per SM a variant is built for (the __launch_bounds__ minimum).
function M.min_ctas(p, opts)
  local cta = p.threads * p.rows
  local by_threads = math.max(1, M.occupancy(p, opts) // cta)
  return math.min(by_threads, M.SM_SMEM // (M.smem(p, opts) + M.static_smem(p, opts) + M.acc_smem(p, opts) + 1024))
end

-- What each row op needs of the space: two_pass when it writes an output row
-- (reading x a second time), stream_operands = rows a streaming thread holds
-- at once in the output pass (x, and w for rmsnorm), occupancy to fix the
-- threads per SM (cross-entropy's target fetch needs the registers of the
-- 1024-thread budget) and cluster_occupancy that of its cluster rows (or a
-- function of the point that gives it),
-- shared_w = the weight rows (w, or w and b) resident variants keep in
-- shared memory (statically; dynamic_w: in dynamic shared memory, past the
-- 48 KB a kernel may declare), bulk_first = the chunk sizes (from, to) where bulk rows of 4
-- accesses and `pipe` stages are ranked before register rows, cluster_first
-- when cluster rows are ranked before streaming ones; staged = the operands
-- (kite_row_args fields, default x) bulk rows copy into their stages, and
-- staged_pipe the one stage count they take when that is limited; modes
-- (default all), nv_max (accesses of a register row), threads_max, pipe_max
-- (of register rows) and no_cluster limit the space of ops that hold more
-- than one row (more spill: ptxas -v); wide_clusters adds wide cluster rows
-- (wide_ok).
-- The two-operand ops' occupancy: rows of three at 512 threads per SM (128
-- registers), the rest at 1024 (64).
local function three_at_512(p) return p.nv == 3 and 512 or 1024 end

M.OPS = {
  rmsnorm = { two_pass = true, stream_operands = 2, occupancy = 1024, shared_w = 1, bulk_first = {},
              cluster_first = true },
  softmax = { two_pass = true, stream_operands = 1, bulk_first = {} },
  cross_entropy = { two_pass = false, stream_operands = 1, occupancy = 1024,
                    bulk_first = { { from = 8192, to = 16384, pipe = 2 } } },
  -- backward ops read two rows (the forward's output or input, and dy) and
  -- make their second pass from global memory themselves: register rows of up
  -- to two accesses per operand, one row block per CTA, or plain streaming;
  -- softmax_bwd's cluster rows (four accesses per operand) read y and dy once,
  -- holding 128 bytes a thread: 512 threads per SM (128 registers; 64 spill)
  -- Their bulk rows stage both rows, two stages of them (each stage holds
  -- twice a single-operand row's bytes)
  softmax_bwd = { two_pass = false, stream_operands = 2, bulk_first = {}, occupancy = three_at_512,
                  modes = { reg = true, loop = true, bulk = true }, nv_max = 3, pipe_max = 1,
                  cluster_occupancy = 512, staged = { "x", "dy" }, staged_pipe = 2 },
  -- one pass over x, no reduction: register rows (a whole row block's loads
  -- out at once) or plain streaming
  cross_entropy_bwd = { two_pass = false, stream_operands = 1, occupancy = 1024, bulk_first = {},
                        modes = { reg = true, loop = true }, no_cluster = true, split = true },
  -- x and the residual per row, w shared: register rows of up to two
  -- accesses per operand, or streaming (the second pass from h or x + res)
  rmsnorm_res = { two_pass = false, stream_operands = 2, occupancy = 1024, shared_w = 1, bulk_first = {},
                  modes = { reg = true, loop = true }, nv_max = 2, pipe_max = 1, no_cluster = true,
                  staged = { "x", "res" } },
  -- one row, w and b shared (64 KB at 512 threads of 4 accesses: dynamic):
  -- register rows and cluster rows (mean, then the variance about it, from
  -- the registers: x kept raw and converted for each use, so that a cluster
  -- row of 512 threads in pairs of CTAs fits 64 registers and two CTAs share
  -- an SM (H200, 32 K x2: 109 -> 87 us); the rest stay at 512 threads per
  -- SM: 256-thread rows spill at four CTAs in bf16, f16 512-thread rows of
  -- 4-16 CTAs at two (4 bytes), bulk rows' stages and w, b fill the shared
  -- memory; H100, 256 K, x16: 64 registers and two CTAs 462 M instructions and
  -- 1.41 TB/s, a Chan-merge butterfly at one CTA 263 M and 2.26 TB/s (bulk
  -- rows); merge_parts' two sum butterflies fit bf16 / f32 in 64) or streaming
  -- in two passes (each chunk's moments merged into the thread's, then the
  -- output from the row cache or L2); bulk rows of two stages (the next row
  -- block's x in shared memory, not registers); register cluster rows of
  -- 1024 threads too (bf16, f32; f16's spill as its 512-thread rows do)
  layernorm = { two_pass = true, stream_operands = 2, occupancy = 1024, shared_w = 2, dynamic_w = true,
                wide_clusters = true, bulk_first = {}, modes = { reg = true, loop = true, bulk = true }, pipe_max = 1,
                staged_pipe = 2, t1024_reg_clusters = { bf16 = true, f32 = true },
                cluster_occupancy = function(p)
                  local two = p.cluster == 2 or (p.mode == "reg" and p.dtype ~= "f16")   -- f16 x4-x16: 4 bytes spill
                  return p.threads == 512 and two and 1024 or 512
                end },
  -- x and dy per row, w shared; dw summed over the CTA's rows into its own
  -- partial row (partials: the partial rows per CTA, a persistent grid,
  -- launched by partials_launcher)
  -- Its cluster rows (four accesses per operand, 512 threads per SM as
  -- softmax_bwd's) keep their sums in shared memory as its other resident
  -- rows do: long rows, read once, without a partial row's read-modify-write
  -- per row; ranked before streaming (cluster_first).
  rmsnorm_bwd = { two_pass = false, stream_operands = 2, shared_w = 1, bulk_first = {},
                  occupancy = three_at_512,
                  modes = { reg = true, loop = true, bulk = true }, nv_max = 3, pipe_max = 1,
                  cluster_occupancy = 512, cluster_first = true, partials = 1, staged = { "x", "dy" },
                  staged_pipe = 2 },
  -- as rmsnorm_bwd, with two sums over rows (dw and db: two partial rows per
  -- CTA); 768 threads per SM (80 registers: 64 spill, and so do rows of
  -- 1024 threads, which get no more); register rows of up to three accesses
  -- per operand (three: rows of 1.5 * 2^k, where two left a quarter idle:
  -- H100 tune, 6144 +15-19% an element against 4096 / 8192; 16-bit ones at
  -- 512 threads per SM, 128 registers).  Bulk cluster rows of 512 threads fit
  -- only with dw's sums in registers (acc_reg_sums), their row read out of
  -- its stage where used (127 registers, no spill)
  layernorm_bwd = { two_pass = false, stream_operands = 2, shared_w = 1, bulk_first = {},
                    occupancy = function(p)   -- 16-bit rows of three: 80 registers spill 24-32 bytes
                      return p.nv == 3 and dtypes[p.dtype].size == 2 and 512 or 768
                    end,
                    modes = { reg = true, loop = true, bulk = true }, nv_max = 3, pipe_max = 1,
                    cluster_occupancy = 512, cluster_first = true, partials = 2, threads_max = 512,
                    staged = { "x", "dy" }, staged_pipe = 2 },
}
for _, opts in pairs(M.OPS) do opts.staged = opts.staged or { "x" } end

-- Staged variants: 16-byte accesses, 2 or 4 stages, at least one CTA per SM
-- within the shared memory.  Bulk rows follow the resident rows' register
-- ladder (tiny rows take one access; ops of one staged operand also three,
-- three_ok); streamed rows take 512 threads and two
-- accesses each (four spill in cross-entropy), with or without a 3-chunk row
-- cache for a second pass.
function M.staged_valid(p, opts)
  if p.access ~= "v16" then return false, "bulk copies move 16-byte accesses" end
  if p.pipe == 1 then return false, "staged rows need two stages or more" end
  if M.min_ctas(p, opts) < 1 then return false, "shared memory" end
  if p.mode == "stream" then
    if p.cache ~= 0 and not (opts.two_pass and p.cache == 3) then return false, "cache" end
    return p.threads == 512 and p.nv == 2   -- 16 KB chunks: room for 4 stages and the cache in half an SM
  end
  if p.cache ~= 0 then return false, "bulk rows are read once" end
  if p.cluster > 1 then return true end   -- cluster_ok has the shape
  if p.threads <= 128 then return p.nv == (p.threads == 32 and 1 or 2) end
  local most = 4 // opts.stream_operands
  return p.nv == most or (p.threads == 256 and p.nv == 2) or (p.nv == 3 and most == 4)
end

-- Cluster rows: one resident row split over `cluster` CTAs (16: past the
-- portable size, allowed per kernel), each holding its slice in registers,
-- the reductions finished through distributed shared memory; 4 accesses a
-- thread (3 for rows of 1.5 * 2^k: three_ok), 256 or 512 threads a CTA (1024,
-- 4 accesses, in clusters of up to 8), so that a
-- row of up to 256 K 16-bit elements is read once.  Bulk cluster rows (16-bit
-- data, two stages) have each CTA's slice of the next row block land in shared
-- memory while the cluster reduces this one, where register rows can only ask
-- L2 for it.
-- Wide cluster rows: 256 threads of 8 accesses, the slice of a 512-thread
-- row of 4 in half the threads, so that the per-row work (reductions,
-- barriers, the exchange, addresses) is spread over twice the elements; two
-- CTAs an SM (M.WIDE_THREADS).  Ops that ask (opts.wide_clusters); the tune
-- picks them where they win (rank 6).  H100, bf16, M*N = 2^28 (session 32):
-- layernorm 256 K 397 us against t512 x16's 401 (0.55 instructions issued a
-- cycle against 0.67, at half the warps), 128 K a tie; rmsnorm, softmax and
-- cross-entropy 6-30% slower than their dispatched rows, so only layernorm asks.
-- Three CTAs an SM in clusters of 16 (80 registers, IEEE division: div_fast
-- spilled) took 467 us there (session 33): slower, so two CTAs an SM stay.
-- 512 threads of 8 accesses, one CTA an SM (clusters of 2-8: 256 K 16-bit
-- elements in 8 CTAs), halve the cluster's CTAs and its exchange at the same
-- warps an SM (session 34).
local function wide_ok(p, opts)
  return opts.wide_clusters == true and p.mode == "reg" and p.pipe == 1 and p.cluster > 1
         and (p.threads == 256 or p.threads == 512 and p.cluster <= 8)
end

-- Rows of three accesses a thread: a resident row of 1.5 * 2^k elements
-- (hidden sizes such as 1536, 3072, 6144, 12288) fills its CTA, where the
-- row of four it used to take leaves a quarter of its threads without data
-- (H100, bf16, the tune at 2^26: layernorm 12288 took 1.65 ps an element
-- against 1.42 at 16384, cross-entropy 0.95 against 0.80).  Register rows
-- of 64-512 threads, one row block per CTA, or bulk rows of two stages
-- (staged_valid keeps those of one staged operand, 256 / 512 threads), and
-- cluster rows of 256 / 512 threads a CTA (cluster_ok), whose rows of
-- 1.5 * 2^k from 12 K up to 192 K left a quarter of a row of four idle
-- (H100 tune, bf16, 2^26: layernorm_bwd 12288 208.8 us against 191.1 at
-- 16384 in the same cluster row, 196608 674.4 against 680.9 at 262144);
-- ranked for the tune alone.
local function three_ok(p)
  local one = p.mode == "reg" and p.pipe == 1 or p.mode == "bulk" and p.pipe == 2   -- bulk: staged_valid
  return one and p.access == "v16" and p.threads >= 64 and p.threads <= 512   -- clusters: cluster_ok
end

local function cluster_ok(p, opts)
  -- 8: a wide row (M.valid has checked wide_ok); 3: a row of 1.5 * 2^k (three_ok), 256 / 512 threads
  local nv = p.nv == 4 or p.nv == 8 or p.nv == 3 and p.threads <= 512
  local shape = p.rows == 1 and p.access == "v16" and nv and p.cache == 0
  local bulk = p.mode == "bulk" and p.pipe == 2 and dtypes[p.dtype].size == 2
  local reg = p.mode == "reg" and p.pipe == 1
  -- rows of 1024 threads: 256 K in clusters of 8, which fill 128 SMs where
  -- clusters of 16 (one CTA an SM) fill 112; bulk rows, and the register rows
  -- of ops that ask (opts.t1024_reg_clusters: the dtypes whose rows fit)
  if p.threads == 1024 then
    return shape and p.cluster <= 8 and (bulk or (reg and (opts.t1024_reg_clusters or {})[p.dtype] == true))
  end
  if p.threads ~= 256 and p.threads ~= 512 then return false end
  if p.mode == "bulk" then return shape and bulk end
  return shape and reg
end

-- What an op's options leave of the space.  Split rows: plain streaming of
-- an op with no reduction over the row (opts.split), whose long rows then
-- make many CTAs of a few chunks each instead of a last wave of few rows.
local function op_allows(p, opts)
  if opts.modes and not opts.modes[p.mode] then return false end
  if p.split > 0 and not (opts.split and p.mode == "loop" and p.access == "v16") then return false end
  if M.staged(p) then
    if opts.staged_pipe and p.pipe ~= opts.staged_pipe then return false end
  elseif opts.pipe_max and p.pipe > opts.pipe_max then
    return false
  end
  if opts.no_cluster and p.cluster > 1 then return false end
  if opts.threads_max and p.threads > opts.threads_max then return false end
  -- nv_max bounds the accesses of a row one CTA holds; a cluster row's slice takes four
  return not (opts.nv_max and p.mode == "reg" and p.cluster == 1 and p.nv > opts.nv_max)
end

-- The sums over rows of a resident variant of an op that has them: a float
-- per element a thread holds, per sum.  They live in shared memory (the
-- kernels' kAccBytes), registers free for the rows, except where a bulk
-- cluster row's stages leave no room for all of them: there the first sums
-- move to registers (kAccRegSums), as few as make the rest fit
-- (layernorm_bwd at 512 threads: dw's 32 floats a thread, db's 64 KB stay).
local function sum_bytes(p)
  return p.nv * M.vec(p) * p.threads * p.rows * 4
end

function M.acc_reg_sums(p, opts)
  if not (opts.partials and p.mode == "bulk" and p.cluster > 1) then return 0 end
  local room = M.SMEM_LIMIT - M.smem(p, opts) - M.static_smem(p, opts)
  for k = 0, opts.partials - 1 do
    if (opts.partials - k) * sum_bytes(p) <= room then return k end
  end
  return opts.partials
end

function M.acc_smem(p, opts)
  if not (opts.partials and M.resident(p)) then return 0 end
  return (opts.partials - M.acc_reg_sums(p, opts)) * sum_bytes(p)
end

function M.valid(p, opts)
  if not op_allows(p, opts) then return false, "not in this op's space" end
  if p.nv == 8 and not wide_ok(p, opts) then return false, "8 accesses: wide cluster rows only" end
  if p.nv == 3 and not three_ok(p) then return false, "3 accesses: register or two-stage bulk rows of 64-512 threads only" end
  if p.cluster > 1 and not cluster_ok(p, opts) then return false, "clusters: resident rows of 4 accesses (3: of 256 / 512 threads; 8: wide rows)" end
  if M.smem(p, opts) + M.acc_smem(p, opts) + M.static_smem(p, opts) > M.SMEM_LIMIT then return false, "shared memory" end
  if M.static_smem(p, opts) > M.STATIC_SMEM_LIMIT then return false, "static shared memory" end
  local cta = p.threads * p.rows
  local small = cta == M.SMALL_CTA and p.mode == "reg" and p.pipe == 1
  if cta ~= math.max(M.CTA_THREADS, p.threads) and not small then
    return false, "CTA size"
  end
  if M.staged(p) then return M.staged_valid(p, opts) end
  if p.pipe > 2 then return false, "only staged rows take more than two stages" end
  local streaming = p.mode == "loop" and p.access == "v16"
  if p.cache > 0 and not (opts.two_pass and streaming) then
    return false, "cache only serves a second pass"
  end
  if p.pipe > 1 and (p.mode ~= "reg" or M.footprint(p) > M.PIPE_BYTES) then
    return false, "only resident rows pipeline, within the registers"
  end
  if p.mode == "reg" then
    return p.access == "v16" and ladder_ok(p, opts)
  end
  -- one streaming variant per access kind, with a full cache when there is a
  -- second pass; two operands halve the accesses a thread keeps in flight
  if p.access == "v16" then
    local nv = 4 // opts.stream_operands
    local cache = opts.two_pass and M.CACHE_BYTES // M.smem({ cache = 1, threads = p.threads, nv = nv }) or 0
    return p.threads == 512 and p.nv == nv and p.cache == cache
  end
  return p.threads == 256 and p.nv == 4
end

function M.chunk(p) return p.cluster * p.threads * p.nv * M.vec(p) end

-- Dispatch metadata: the N range, the alignment the variant needs of every
-- pointer and row stride, and its rank (lower is preferred when several fit;
-- among equal ranks the runtime takes the smallest n_max).  The ranks follow
-- what was measured on an H200 (bf16, bench/RESULTS.md, session 5):
--   0  resident rows, one row block per CTA, on the wide ladder: one warp
--      per row of 1, 2 or 4 accesses, then 4 accesses per thread on 64 to 512
--      threads; where opts.bulk_first says, bulk rows of 4 accesses in their
--      place (cross-entropy 8192 and 16384: 3.66 v. 3.39, 3.33 v. 2.87 TB/s)
--   1  the other resident rows (fewer accesses, pipelined, 128-thread CTAs);
--      rmsnorm's cluster rows (session 8, bf16, M*N = 2^28, 128 K / 256 K:
--      3.26 / 2.97 TB/s against streaming's 2.72 / 2.63; at 64 K 3.32 v. 3.49)
--   2  streaming rows by plain loads (16-byte accesses; session 5, N = 65536
--      / 262144: rmsnorm 3.22 / 2.69, softmax 3.80 / 2.83, cross-entropy
--      3.85 / 4.04 TB/s: 6-28% faster than the streamed rows, even with
--      their second pass through the bulk-copy ring)
--   3  streamed rows (stream mode, 2 stages, the op's row cache); the other
--      ops' cluster rows (slower than streaming by plain loads: tune, N =
--      65536, softmax 91.8 v. 78.6 us, cross-entropy 68.3 v. 41.2 us)
--   4  resident rows of 1024 threads: slower than streaming where both fit
--   5  element-wise streaming, for unaligned data
--   6  the other staged rows: measured slower, never preferred by rank (nor
--      the bulk cluster rows, the register cluster rows of 1024 threads (an
--      H100 only, session 25: 1% over t512 x16 at 256 K), the wide cluster
--      rows and the backward ops' bulk rows: make tune's rules pick any of
--      them where they win)
local function bulk_first(p, opts)
  local c = M.chunk(p)
  for _, b in ipairs(opts.bulk_first) do
    if c >= b.from and c <= b.to and (p.mode ~= "bulk" or (p.pipe == b.pipe and p.nv == 4)) then return true end
  end
  return false
end

local function reg_rank(p, opts)
  if p.nv == 3 then return 6 end   -- tune picks them
  if p.cluster > 1 and (p.threads == 1024 or p.nv == 8) then return 6 end   -- tune picks them
  if p.cluster > 1 then return opts.cluster_first and 1 or 3 end
  -- an op summing into partial rows streams slowly (a read-modify-write of
  -- its partial row per row): its 1024-thread rows come before streaming
  if p.threads == 1024 then return opts.partials and 1 or 4 end
  -- ...and its persistent grid (a few CTAs per SM) leaves small CTAs short
  -- of threads: rmsnorm_bwd 1024, t64_r2 3.25 v. t64_r4 4.03 TB/s (session 9)
  if opts.partials and p.threads * p.rows < M.CTA_THREADS then return 2 end
  if p.pipe ~= 1 or bulk_first(p, opts) or p.threads * p.rows < M.CTA_THREADS then return 1 end
  if p.threads == 32 or p.nv == 4 then return 0 end
  return 1
end

function M.meta(p, opts)
  local size = dtypes[p.dtype].size
  -- n_step: a resident row costs a whole chunk, a streamed one whole chunks
  local step = M.chunk(p)
  -- a cluster row takes rows past half its chunk: shorter ones a smaller cluster serves
  local n_min = p.cluster > 1 and M.chunk(p) // 2 + 1 or 1
  if p.mode == "bulk" then
    local first = p.cluster == 1 and bulk_first(p, opts)
    return { n_min = n_min, n_max = M.chunk(p), align = 16, rank = first and 0 or 6, n_step = step }
  end
  if p.mode == "stream" then
    local cache = opts.two_pass and 3 or 0
    return { n_min = 1, n_max = M.N_MAX, align = 16, rank = (p.pipe == 2 and p.cache == cache) and 3 or 6,
             n_step = step }
  end
  if p.mode == "reg" then
    return { n_min = n_min, n_max = M.chunk(p), align = 16, rank = reg_rank(p, opts), n_step = step }
  end
  if p.access == "v16" then
    return { n_min = 1, n_max = M.N_MAX, align = 16, rank = p.split > 0 and 6 or 2, n_step = step }
  end
  return { n_min = 1, n_max = M.N_MAX, align = size, rank = 5, n_step = step }
end

M.PIPE_BYTES = 64   -- most data a pipelining thread holds: more spills at 64 registers

-- Names: the cluster and the split suffixes, absent without them.
function M.name(op)
  return function(p)
    return string.format("%s_%s_%s_t%d_r%d_n%d_%s_c%d_p%d%s%s", op, p.dtype, p.mode, p.threads, p.rows,
                         p.nv, p.access, p.cache, p.pipe, p.cluster > 1 and "_x" .. p.cluster or "",
                         p.split > 0 and "_s" .. p.split or "")
  end
end

-- A whole space.lua for a row op.
function M.space(op)
  local opts = M.OPS[op]
  return {
    op = op, template = op .. ".cu.tpl",
    axes = M.axes(), name = M.name(op),
    meta = function(p) return M.meta(p, opts) end,
    valid = function(p) return M.valid(p, opts) end,
  }
end

-- The CUDA prelude: includes, the variant's constants, and the device
-- helpers every row op uses.  p is the point (P in a template).  The helpers
-- are the same text in every variant: #include lines of out/include/, each
-- written once (include()), read inside the variant's namespace after its
-- constants, which they use.
local function shared(key)   -- M[key]'s line: out/include/rowops_<key>.cuh
  return include("rowops_" .. key:lower() .. ".cuh", M[key])
end

function M.prelude(op, p)
  local opts = M.OPS[op]
  local d = dtypes[p.dtype]
  local vec = M.vec(p)
  local out = {}
  local function add(s) out[#out + 1] = s end
  add(dtypes.includes())
  add("#include <atomic>\n#include <type_traits>")
  add('#include "kite.h"\n#include "kite_launch.h"\n')
  add("// Not every op uses every shared helper below.\n#pragma nv_diag_suppress 177\n\nnamespace {\n")
  add(string.format([[
typedef %s elem_t;
constexpr int kThreads = %d;            // threads per row in one CTA
constexpr int kCluster = %d;            // CTAs a row is split over (a cluster), kThreads each
constexpr int kRowThreads = kThreads * kCluster;
constexpr int kRows = %d;               // rows per CTA
constexpr int kNv = %d;                 // accesses per thread per chunk
constexpr int kVec = %d;                // elements per access
constexpr bool kResident = %s;        // one chunk per row, held in registers
constexpr bool kStaged = %s;          // chunks arrive in shared-memory stages by bulk copies
constexpr int kStagedOps = %d;          // operands a stage holds (x, then dy or the residual)
constexpr int kWarps = kThreads / 32;   // warps per row in one CTA
constexpr int kRedSlots = kWarps;      // reduction slots per row: one per warp
constexpr int kChunk = kRowThreads * kNv * kVec;
constexpr int kCtaThreads = kThreads * kRows;
constexpr int kMinCtas = %d;            // CTAs per SM it is built for (registers, shared memory)
constexpr int kPipe = %d;               // row blocks a CTA has in flight (> 1: persistent, prefetching)
constexpr int kCacheChunks = %d;        // chunks the output pass rereads from shared memory
constexpr bool kTwoPass = %s;         // the op reads the row a second time for its output
constexpr int kWeightRows = %d;         // weight rows (w, b) kept in dynamic shared memory
constexpr int kSplitChunks = %d;        // chunks of a streaming row one CTA takes (0: the whole row)
// A grid of as many CTAs (clusters) as fit the GPU at once, each walking row
// blocks: when it prefetches, for cluster rows, which ask L2 for their next
// row while they reduce this one, and when a CTA that fills its SM alone
// copies weight rows into shared memory, so that it does so once, not once
// per row (w and b are twice the row's bytes).  Else one CTA per row block,
// the weight rows read from L2 each time: where other CTAs share the SM their
// loads hide that copy, and the hardware spreads the last row blocks evenly
// (H100, layernorm one-row rows: 9-10%% faster at 4 K-16 K with 2-8 CTAs an
// SM, 8%% slower with one; H200, N = 1024, rows of several a CTA: 0.95x
// torch.compile against 0.85x persistent).
constexpr bool kPersistent = kPipe > 1 || kCluster > 1 || (kWeightRows > 0 && kRows == 1 && kMinCtas == 1);
]], d.ctype, p.threads, p.cluster, p.rows, p.nv, vec, tostring(M.resident(p)), tostring(M.staged(p)),
    M.staged_ops(p, opts), M.min_ctas(p, opts), p.pipe, p.cache, tostring(opts.two_pass),
    (opts.dynamic_w and M.resident(p)) and opts.shared_w or 0, p.split))
  add(d.convert())
  add(d.words())
  add(ptx.helpers({ "SMEM", "CLUSTER", "PREFETCH", "MBARRIER" }))
  add(shared("DEVICE"))
  add(launch.raise_smem())
  add(shared("LAUNCH"))
  if M.staged(p) then
    add(ptx.helpers({ "BULK" }))
    add(shared("STAGED"))
  end
  -- every variant carries a resident and a streaming row driver: the kernel
  -- names both, in the two branches of `if constexpr (kResident)`
  if p.mode == "bulk" then add(M.staged_rows(p, opts)) end   -- the rows its stages copy
  add(shared(p.mode == "bulk" and "BULK_ROWS" or "REG_ROWS"))
  add(shared(p.mode == "stream" and "STREAM_ROWS" or "LOOP_ROWS"))
  if opts.partials then
    add(string.format("constexpr int kSums = %d;   // partial rows per CTA (sums over rows: dw, db)", opts.partials))
    add(string.format("constexpr int kAccRegSums = %d;   // sums a resident thread keeps in registers (the first)",
                      M.acc_reg_sums(p, opts)))
    add(shared("PARTIALS"))
  end
  add("}  // namespace\n")
  return table.concat(out, "\n")
end

-- Host side of every row-op launcher: how many row groups (CTAs, or clusters)
-- fit the GPU at once, and the launch itself.  After launch.RAISE_SMEM.
M.LAUNCH = [[
// A launch of `groups` clusters of kCluster CTAs, the cluster shape in *attr.
static cudaLaunchConfig_t cluster_config(cudaLaunchAttribute *attr, unsigned groups, int smem, cudaStream_t stream)
{
  attr->id = cudaLaunchAttributeClusterDimension;
  attr->val.clusterDim = { (unsigned)kCluster, 1, 1 };
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(groups * kCluster);
  cfg.blockDim = dim3(kCtaThreads);
  cfg.dynamicSmemBytes = (size_t)smem;
  cfg.stream = stream;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  return cfg;
}

// Row groups (CTAs, or clusters of kCluster CTAs) of kernel with smem bytes
// of dynamic shared memory that run at once: sms * kMinCtas CTAs; clusters as
// the occupancy API counts them (a cluster needs kCluster SMs of one GPC, so
// fewer fit than sms / kCluster), asked once per device.  The kernel's
// attributes (shared memory, big clusters) must be set first.
template <typename K>
static cudaError_t groups_at_once(K kernel, int smem, int64_t *n)
{
  if constexpr (kCluster == 1) {
    int sms;
    const cudaError_t e = kite__device_sms(&sms);
    if (e == cudaSuccess) *n = (int64_t)sms * kMinCtas;
    return e;
  } else {
    static std::atomic<int> known[64];   // per device; racing callers store the same count
    int dev;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess) return e;
    int c = dev < 64 ? known[dev].load(std::memory_order_relaxed) : 0;
    if (c == 0) {
      cudaLaunchAttribute cluster;
      const cudaLaunchConfig_t cfg = cluster_config(&cluster, 1, smem, 0);
      if ((e = cudaOccupancyMaxActiveClusters(&c, kernel, &cfg)) != cudaSuccess) return e;
      if (c < 1) c = 1;   // none fit: the launch says why
      if (dev < 64) known[dev].store(c, std::memory_order_relaxed);
    }
    *n = c;
    return cudaSuccess;
  }
}

// The kernel on `groups` CTAs, or clusters of kCluster CTAs (a launch
// attribute), its shared-memory limit raised to smem first where needed.
template <typename K>
static cudaError_t launch_groups(K kernel, unsigned groups, int smem, cudaStream_t stream, const kite_row_args &a)
{
  if constexpr (kCluster == 1) {
    kernel<<<groups, kCtaThreads, smem, stream>>>(a);
    return cudaGetLastError();
  } else {
    cudaLaunchAttribute cluster;
    const cudaLaunchConfig_t cfg = cluster_config(&cluster, groups, smem, stream);
    return cudaLaunchKernelEx(&cfg, kernel, a);
  }
}

// What a launch sets on the kernel once per device: the shared-memory limit
// when it takes more than the 48 KB default, big clusters past 8 CTAs.
template <typename K>
static cudaError_t prepare_kernel(K kernel, int smem)
{
  if (smem > 0) {   // static shared memory counts against the 48 KB default too
    const cudaError_t e = raise_smem(kernel, smem);
    if (e != cudaSuccess) return e;
  }
  if constexpr (kCluster > 8) return allow_big_clusters(kernel);
  return cudaSuccess;
}
]]

-- Launcher: one CTA (cluster) per kRows rows, grid-strided past the grid limit.
function M.launcher(name, kernel)
  return string.format([[
extern "C" cudaError_t kite_v_%s(const void *args, cudaStream_t stream)
{
  const kite_row_args *a = static_cast<const kite_row_args *>(args);
  const int64_t blocks = (a->M + kRows - 1) / kRows * row_splits(a->N);
  cudaError_t e = prepare_kernel(%s, kDynSmem);
  if (e != cudaSuccess) return e;
  int64_t limit = kMaxGrid / kCluster;   // in clusters, like blocks
  if (kPersistent && (e = groups_at_once(%s, kDynSmem, &limit)) != cudaSuccess) return e;
  return launch_groups(%s, (unsigned)(blocks < limit ? blocks : limit), kDynSmem, stream, *a);
}]], name, kernel, kernel, kernel)
end

-- Launcher of an op that sums over rows into partial rows (opts.partials):
-- a persistent grid of at most a->parts CTAs (and, for single CTAs, no more
-- than fit the GPU at once: sms * kMinCtas), CTA i writing partial rows
-- kSums * i + q, then each sum's partial rows added in order into its output
-- (dw, db: those asked for).
function M.partials_launcher(name, kernel)
  return string.format([[
extern "C" cudaError_t kite_v_%s(const void *args, cudaStream_t stream)
{
  const kite_row_args *a = static_cast<const kite_row_args *>(args);
  const int64_t blocks = (a->M + kRows - 1) / kRows;
  constexpr int smem = kDynSmem + kAccBytes;
  cudaError_t e = prepare_kernel(%s, smem);
  if (e != cudaSuccess) return e;
  // no more CTAs (clusters) than fit at once: a second wave would hold partial rows too
  int64_t limit;
  if ((e = groups_at_once(%s, smem, &limit)) != cudaSuccess) return e;
  const int64_t parts = sums_asked(*a) ? a->parts : blocks;   // CTAs (clusters) with partial rows
  const unsigned grid = (unsigned)(blocks < parts ? blocks : parts < limit ? parts : limit);
  if ((e = launch_groups(%s, grid, smem, stream, *a)) != cudaSuccess) return e;
  const dim3 cols((unsigned)((a->N + kSumCols - 1) / kSumCols));
  float *const out[2] = { a->dw, a->db };
  for (int q = 0; q < kSums; ++q) {
    if (!out[q]) continue;
    sum_partials<<<cols, dim3(kSumCols, kSumSlices), 0, stream>>>(a->partials + q * partial_ld(a->N),
                                                                   kSums * partial_ld(a->N), (int)grid, (int)a->N,
                                                                   out[q]);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
  }
  return cudaSuccess;
}]], name, kernel, kernel, kernel)
end

-- Partial rows: what a CTA adds up over its rows, and their sum.
M.PARTIALS = [[
constexpr int kSumCols = 32;     // columns of dw per CTA of sum_partials, one per lane
constexpr int kSumSlices = 32;   // warps a column's partial rows are dealt over

static_assert(kSums <= 2, "the launcher sums into dw and db");

// Floats between partial rows: N rounded up to 16 bytes.
__host__ __device__ __forceinline__ int64_t partial_ld(int64_t n) { return (n + 3) / 4 * 4; }

// Whether the call asks for a sum over rows (then a.partials has a.parts CTAs' rows).
__host__ __device__ __forceinline__ bool sums_asked(const kite_row_args &a) { return a.dw || a.db; }

// This thread's lane within its row (as place() has it): a cluster row's
// CTA holds slice cluster_rank() of the row.
__device__ __forceinline__ int lane_in_row()
{
  return threadIdx.x % kThreads + (kCluster > 1 ? (int)cluster_rank() * kThreads : 0);
}

// The first partial row of this CTA's cluster (its kSums rows follow at
// partial_ld(n); each CTA of a cluster writes its slice), or null.
__device__ __forceinline__ float *cta_partials(const kite_row_args &a, int n)
{
  return sums_asked(a) ? a.partials + (int64_t)(blockIdx.x / kCluster) * kSums * partial_ld(n) : nullptr;
}

// dw[j] = sum of part[g][j] over g < parts: slice s of the CTA adds rows s,
// s + kSumSlices, ... in order, then slice 0 adds the slices' sums in order,
// so dw is the same bytes every run of the same grid.
__global__ void __launch_bounds__(kSumCols * kSumSlices) sum_partials(const float *part, int64_t ld, int parts,
                                                                      int n, float *dw)
{
  __shared__ float slice_sum[kSumSlices][kSumCols];
  const int64_t j = (int64_t)blockIdx.x * kSumCols + threadIdx.x;
  float s = 0.f;
  if (j < n)
    for (int g = threadIdx.y; g < parts; g += kSumSlices) s += part[g * ld + j];
  slice_sum[threadIdx.y][threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.y != 0 || j >= n) return;
  for (int k = 1; k < kSumSlices; ++k) s += slice_sum[k][threadIdx.x];
  dw[j] = s;
}

// A streaming thread's kVec partial sums at element i (one access) of its
// CTA's partial row, read from and written to L2 (.cg): only this thread
// touches them, and an L1 line could be stale.
__device__ __forceinline__ void partial_load(const float *row, int i, int n, float (&f)[kVec])
{
  if constexpr (kVec % 4 == 0) {
    if (i + kVec <= n) {
#pragma unroll
      for (int q = 0; q < kVec / 4; ++q) {
        const float4 v = __ldcg(reinterpret_cast<const float4 *>(row + i) + q);
        f[4 * q] = v.x, f[4 * q + 1] = v.y, f[4 * q + 2] = v.z, f[4 * q + 3] = v.w;
      }
      return;
    }
  }
#pragma unroll
  for (int e = 0; e < kVec; ++e) f[e] = i + e < n ? __ldcg(row + i + e) : 0.f;
}

__device__ __forceinline__ void partial_store(float *row, int i, int n, const float (&f)[kVec])
{
  if constexpr (kVec % 4 == 0) {
    if (i + kVec <= n) {
#pragma unroll
      for (int q = 0; q < kVec / 4; ++q)
        __stcg(reinterpret_cast<float4 *>(row + i) + q, make_float4(f[4 * q], f[4 * q + 1], f[4 * q + 2], f[4 * q + 3]));
      return;
    }
  }
#pragma unroll
  for (int e = 0; e < kVec; ++e)
    if (i + e < n) __stcg(row + i + e, f[e]);
}

// row[i ...] = v (the CTA's first row), else row[i ...] += v: a streaming
// thread's kVec values of one sum at element i.
__device__ __forceinline__ void partial_accum(float *row, int i, int n, bool first, const float (&v)[kVec])
{
  float f[kVec];
  if (first) {
#pragma unroll
    for (int e = 0; e < kVec; ++e) f[e] = v[e];
  } else {
    partial_load(row, i, n, f);
#pragma unroll
    for (int e = 0; e < kVec; ++e) f[e] += v[e];
  }
  partial_store(row, i, n, f);
}

// Resident rows keep their sums in dynamic shared memory (after kDynSmem), a float per
// element a thread holds and sum, registers free for the rows.  The kVec sums
// of an access are split into groups of kAccW (16 bytes where kVec allows),
// each group in a plane [sum][access][group][thread] of its own: a warp's
// 16-byte loads of one group are contiguous (no bank conflicts; a thread's
// whole access side by side made every load two-way conflicted).  Bulk
// cluster rows with no room for every sum keep the first kAccRegSums in
// acc_t's registers; elsewhere an acc_t is empty.
constexpr int kAccW = kVec % 4 == 0 ? 4 : kVec;
constexpr int kAccBytes = kResident ? (kSums - kAccRegSums) * kElems * kCtaThreads * (int)sizeof(float) : 0;
static_assert(kAccRegSums == 0 || kRows == 1, "sums in registers: each thread stores its own");
struct acc_t { float v[kAccRegSums > 0 ? kAccRegSums * kElems : 1]; };

// This thread's group g (kAccW values) of sum q (one in shared memory) for its access j.
__device__ __forceinline__ float *acc_at(int q, int j, int g, int thread = threadIdx.x)
{
  return reinterpret_cast<float *>(row_cache + kDynSmem / sizeof(raw_t)) +
         ((((q - kAccRegSums) * kNv + j) * (kVec / kAccW) + g) * kCtaThreads + thread) * kAccW;
}

// Value e of this thread's access j in sum q (in shared memory: of the thread given).
__device__ __forceinline__ float &acc_ref(acc_t &acc, int q, int j, int e, int thread = threadIdx.x)
{
  if (q < kAccRegSums) return acc.v[(q * kNv + j) * kVec + e];
  return acc_at(q, j, e / kAccW, thread)[e % kAccW];
}

// Sum q of access j updated element-wise, s[e] = f(e, s[e]), in shared memory a group of kAccW at a time.
template <typename F>
__device__ __forceinline__ void acc_update(acc_t &acc, int q, int j, F f)
{
  if (q < kAccRegSums) {
#pragma unroll
    for (int e = 0; e < kVec; ++e) acc_ref(acc, q, j, e) = f(e, acc_ref(acc, q, j, e));
    return;
  }
#pragma unroll
  for (int g = 0; g < kVec / kAccW; ++g) {
    float *s = acc_at(q, j, g);
    if constexpr (kAccW == 4) {
      float4 v = *reinterpret_cast<float4 *>(s);
      v.x = f(4 * g, v.x), v.y = f(4 * g + 1, v.y), v.z = f(4 * g + 2, v.z), v.w = f(4 * g + 3, v.w);
      *reinterpret_cast<float4 *>(s) = v;
    } else {
#pragma unroll
      for (int e = 0; e < kAccW; ++e) s[e] = f(g * kAccW + e, s[e]);
    }
  }
}

// Sum q of access j += a * b, element-wise over the access.
__device__ __forceinline__ void acc_add(acc_t &acc, int q, int j, const float (&a)[kVec], const float (&b)[kVec])
{
  acc_update(acc, q, j, [&](int e, float v) { return fmaf(a[e], b[e], v); });
}

// Sum q of access j += a, element-wise over the access.
__device__ __forceinline__ void acc_add_plain(acc_t &acc, int q, int j, const float (&a)[kVec])
{
  acc_update(acc, q, j, [&](int e, float v) { return v + a[e]; });
}

// Zeroes this thread's sums.
__device__ __forceinline__ void acc_zero_all(acc_t &acc)
{
#pragma unroll
  for (int q = 0; q < kSums; ++q)
#pragma unroll
    for (int j = 0; j < kNv; ++j)
#pragma unroll
      for (int e = 0; e < kVec; ++e) acc_ref(acc, q, j, e) = 0.f;
}

// The CTA's row groups' sums added in row-group order, stored as the CTA's
// partial rows (from part) by the first group.
__device__ __forceinline__ void store_partial(acc_t &acc, float *part, int n)
{
  __syncthreads();   // every row group's sums are in
  const int r = threadIdx.x / kThreads, t = threadIdx.x % kThreads;   // t: the thread's sums in each row group
  if (r != 0) return;
#pragma unroll
  for (int q = 0; q < kSums; ++q)
#pragma unroll
    for (int j = 0; j < kNv; ++j) {
      const int i = access_index(0, j, lane_in_row());
#pragma unroll
      for (int e = 0; e < kVec; ++e) {
        if (i + e >= n) continue;
        float s = acc_ref(acc, q, j, e, t);
        for (int g = 1; g < kRows; ++g) s += acc_ref(acc, q, j, e, g * kThreads + t);
        part[q * partial_ld(n) + i + e] = s;
      }
    }
}
]]

M.DEVICE = [[
constexpr int64_t kMaxGrid = 2147483647;

// The CTAs (clusters) a row block takes: one, or for split rows one per
// kSplitChunks chunks of a row of n.
__host__ __device__ __forceinline__ int64_t row_splits(int64_t n)
{
  constexpr int64_t span = (int64_t)(kSplitChunks > 0 ? kSplitChunks : 1) * kChunk;
  return kSplitChunks > 0 ? (n + span - 1) / span : 1;
}
constexpr float kLog2e = 1.4426950408889634f;

// kVec elements as loaded (one 16-byte access, or one element), held as
// the words they arrive in: registers then carry whole words, and elements
// are taken out only where they become floats.
constexpr int kAccessBytes = kVec * (int)sizeof(elem_t);
typedef std::conditional_t<kAccessBytes >= 4, uint32_t, uint16_t> word_t;
typedef std::conditional_t<sizeof(elem_t) == 2, uint16_t, uint32_t> bits_t;   // one element's bits
constexpr int kRawWords = kAccessBytes / (int)sizeof(word_t);
constexpr int kEpw = (int)(sizeof(word_t) / sizeof(elem_t));   // elements per word of an access
struct __align__(kAccessBytes) raw_t { word_t w[kRawWords]; };

constexpr int kCtaSlot = kNv * kThreads;   // accesses one CTA holds of a row's chunk
constexpr int kStageRaw = kStagedOps * kRows * kCtaSlot;  // accesses in one stage: [operand][row][slot]
constexpr int kCacheRaw = kCacheChunks * kNv * kThreads;
constexpr int kWeightRaw = kNv * kCtaThreads;   // one weight row's slots, [access][thread]
constexpr int kWeightOffset = kCacheRaw + (kStaged ? kPipe * kStageRaw : 0);
constexpr int kDynSmem = (kWeightOffset + kWeightRows * kWeightRaw) * (int)sizeof(raw_t);
static_assert(kCacheChunks == 0 || kRows == 1, "the row cache holds one row");


// Read-only path loads.  An intrinsic rather than inline asm: the compiler
// keeps a memory load where the code issues it (before the reduction's
// barrier, for a prefetch), while side-effect-free asm may be sunk to its use.
__device__ __forceinline__ raw_t ld_stream(const elem_t *p)
{
  if constexpr (sizeof(raw_t) == 16) {
    const uint4 v = __ldg(reinterpret_cast<const uint4 *>(p));
    return *reinterpret_cast<const raw_t *>(&v);
  } else {
    return *reinterpret_cast<const raw_t *>(p);
  }
}

constexpr int kElems = kNv * kVec;   // elements a thread holds of a chunk
constexpr int kElemBits = 8 * (int)sizeof(elem_t);

// The elements of an access as floats, in order.
__device__ __forceinline__ void raw_floats1(const raw_t &r, float *f)
{
  if constexpr (sizeof(word_t) == 4) {
#pragma unroll
    for (int k = 0; k < kRawWords; ++k) word_floats(r.w[k], &f[k * kEpw]);
  } else {
    elem_t e;
    memcpy(&e, &r.w[0], sizeof e);
    f[0] = to_f32(e);
  }
}

// kVec floats as an access (rounded to elem_t).
__device__ __forceinline__ raw_t floats_raw(const float *f)
{
  raw_t r;
  if constexpr (sizeof(word_t) == 4) {
#pragma unroll
    for (int k = 0; k < kRawWords; ++k) r.w[k] = floats_word(&f[k * kEpw]);
  } else {
    const elem_t e = from_f32(f[0]);
    memcpy(&r.w[0], &e, sizeof e);
  }
  return r;
}

// The bits of element e of an access, and setting them.
__device__ __forceinline__ bits_t elem_bits(const raw_t &r, int e)
{
  return (bits_t)(r.w[e / kEpw] >> (e % kEpw * kElemBits));
}

__device__ __forceinline__ void set_elem_bits(raw_t &r, int e, bits_t b)
{
  if constexpr (kEpw == 1) {
    r.w[e] = b;
  } else {
    const int s = e % kEpw * kElemBits;
    r.w[e / kEpw] = (r.w[e / kEpw] & ~(0xffffu << s)) | ((uint32_t)b << s);
  }
}

// An access with every element `fill`.
__device__ __forceinline__ raw_t splat(float fill)
{
  float f[kVec];
#pragma unroll
  for (int e = 0; e < kVec; ++e) f[e] = fill;
  return floats_raw(f);
}

// Access starting at element i of a row of n: whole, or element-wise at the
// tail, elements at or past n reading as fill.
__device__ __forceinline__ raw_t load_raw(const elem_t *row, int i, int n, float fill)
{
  if (i + kVec <= n) return ld_stream(row + i);
  raw_t r = splat(fill);
  const bits_t *b = reinterpret_cast<const bits_t *>(row + i);
#pragma unroll
  for (int e = 0; e < kVec; ++e)
    if (i + e < n) set_elem_bits(r, e, b[e]);
  return r;
}

// A resident thread's accesses as floats, in access order (the fill past the
// row's end is in the data already, so no element needs a test).
__device__ __forceinline__ void raw_floats(const raw_t (&r)[kNv], float (&f)[kElems])
{
#pragma unroll
  for (int j = 0; j < kNv; ++j) raw_floats1(r[j], &f[j * kVec]);
}

// Elements of an access as floats; those at or past n read as fill.
__device__ __forceinline__ void to_floats(const raw_t &r, int i, int n, float fill, float (&f)[kVec])
{
  raw_floats1(r, f);
  if (i + kVec <= n) return;
#pragma unroll
  for (int e = 0; e < kVec; ++e)
    if (i + e >= n) f[e] = fill;
}

// kVec floats f as the access at element i of a row of n (elements from n on
// are not written).
__device__ __forceinline__ void store_floats(elem_t *row, int i, int n, const float *f)
{
  const raw_t r = floats_raw(f);
  if (i + kVec <= n) {
    *reinterpret_cast<raw_t *>(row + i) = r;
    return;
  }
  bits_t *b = reinterpret_cast<bits_t *>(row + i);
#pragma unroll
  for (int e = 0; e < kVec; ++e)
    if (i + e < n) b[e] = elem_bits(r, e);
}

// Element index of a thread's j-th access in the chunk starting at base.
__device__ __forceinline__ int access_index(int base, int j, int t)
{
  return base + (j * kRowThreads + t) * kVec;
}

// This thread's accesses of the chunk at base; past n they read as fill.
__device__ __forceinline__ void load_chunk(const elem_t *row, int base, int t, int n, raw_t (&r)[kNv],
                                           float fill = 0.f)
{
#pragma unroll
  for (int j = 0; j < kNv; ++j) {
    const int i = access_index(base, j, t);
    r[j] = i < n ? load_raw(row, i, n, fill) : splat(fill);
  }
}

// A resident row's chunk: a whole one (kChunk <= n, the same in every thread)
// with no test per access, else load_chunk's.  ncu (H100, session 28): 4-15%
// fewer instructions in rmsnorm's and layernorm's resident rows.  Only their
// x rows take it: as every op's register load_row (H100, session 30) it made
// cross-entropy's cluster rows 5% faster but layernorm_bwd's dispatched 16 K
// row (reg t256 x2) 12% slower and rmsnorm_bwd's cluster rows up to 6%.
__device__ __forceinline__ void load_whole(const elem_t *row, int t, int n, raw_t (&r)[kNv])
{
  if (kChunk <= n) {
#pragma unroll
    for (int j = 0; j < kNv; ++j) r[j] = ld_stream(row + access_index(0, j, t));
  } else {
    load_chunk(row, 0, t, n, r);
  }
}

// The row cache: [chunk][access][thread], so a warp's accesses are contiguous.
// Each thread reads back only what it wrote, so no barrier is needed.  Staged
// variants keep their stages after it.
extern __shared__ raw_t row_cache[];

__device__ __forceinline__ void cache_put(int c, int t, const raw_t (&r)[kNv])
{
#pragma unroll
  for (int j = 0; j < kNv; ++j) row_cache[(c * kNv + j) * kThreads + t] = r[j];
}

__device__ __forceinline__ void cache_get(int c, int t, raw_t (&r)[kNv])
{
#pragma unroll
  for (int j = 0; j < kNv; ++j) r[j] = row_cache[(c * kNv + j) * kThreads + t];
}

// Weight row q's slots in dynamic shared memory, after the cache and stages.
__device__ __forceinline__ raw_t *weight_slots(int q) { return row_cache + kWeightOffset + q * kWeightRaw; }

__device__ __forceinline__ float fast_exp2(float x)
{
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// Running softmax statistics: max m and sum of exp(x - m).
struct ms_t { float m, s; };

// Folds kVec values into running statistics (one exp per element).
template <int K>
__device__ __forceinline__ ms_t ms_add(ms_t a, const float (&f)[K])
{
  float mc = f[0];
#pragma unroll
  for (int e = 1; e < K; ++e) mc = fmaxf(mc, f[e]);
  const float m = fmaxf(a.m, mc);
  if (m == -INFINITY) return a;
  const float ms = m * kLog2e;
  // (a.m - m) first: exactly 0 while the max holds, so the running sum is not
  // rescaled by a rounding residual on every step (an FFMA would do that).
  float s = a.m == -INFINITY ? 0.f : a.s * fast_exp2((a.m - m) * kLog2e);
#pragma unroll
  for (int e = 0; e < K; ++e) s += fast_exp2(fmaf(f[e], kLog2e, -ms));
  return { m, s };
}

// Streaming rows: the running statistics folded over this thread's accesses
// of the chunk at base (elements past n read as -inf).
__device__ __forceinline__ ms_t chunk_stats(ms_t st, const raw_t (&r)[kNv], int base, int t, int n)
{
#pragma unroll
  for (int j = 0; j < kNv; ++j) {
    float f[kVec];
    to_floats(r[j], access_index(base, j, t), n, -INFINITY, f);
    st = ms_add(st, f);
  }
  return st;
}

struct op_sum { __device__ float operator()(float a, float b) const { return a + b; } };
struct op_max { __device__ float operator()(float a, float b) const { return fmaxf(a, b); } };
struct op_sum2 {   // two sums reduced together: one barrier for both
  __device__ float2 operator()(float2 a, float2 b) const { return make_float2(a.x + b.x, a.y + b.y); }
};

// What row_reduce moves of a float or a float2 between lanes (st_async_peer below: between CTAs).
__device__ __forceinline__ float shfl_xor(float v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }
__device__ __forceinline__ float2 shfl_xor(float2 v, int o) { return make_float2(shfl_xor(v.x, o), shfl_xor(v.y, o)); }

// v combined by op over each aligned group of kParts lanes, by a butterfly;
// op commutes, so every lane of a group gets the same bits.
template <int kParts, typename T, typename Op>
__device__ __forceinline__ T lane_fold(T v, Op op)
{
  static_assert(kParts <= 32 && (kParts & (kParts - 1)) == 0, "a power of two of lanes");
#pragma unroll
  for (int o = kParts / 2; o > 0; o >>= 1) v = op(v, shfl_xor(v, o));
  return v;
}

// Cluster rows' exchange of their CTAs' values: thread q of each CTA stores
// its CTA's value into CTA q's slot for it by st.async, counted in bytes on
// CTA q's barrier, and each CTA waits on its own barrier for its peers'.
// A cluster barrier instead (arrive.release) made every thread wait for its
// row's global stores first: ncu (H200, N = 256 K, x16 rows) put "membar"
// stalls at 0.6-1.0 per issued instruction.  Two buffers in turn, a phase of
// each barrier per use: a CTA rewrites a peer's buffer b two exchanges later,
// once that peer's value for the exchange between has come, which the peer
// sends after a CTA barrier that each of its threads passes only once it has
// read buffer b.  seq: the exchanges each warp has made (every thread of a
// cluster makes the same ones), read and written by the warp's lane 0 only.
struct xchg_t {
  uint64_t bar[2];
  float2 slot[2][kCluster];        // float values use the first kCluster floats
  uint32_t seq[kCtaThreads / 32];
};

__device__ __forceinline__ xchg_t &xchg()
{
  __shared__ xchg_t x;
  return x;
}

// A cluster row driver's start, every thread: the exchange's barriers made,
// this warp's count zeroed, then the arrive of the cluster barrier that
// publishes them (its wait comes once the first row's loads are out): a
// cluster's CTAs write into each other's shared memory only once all have started.
__device__ __forceinline__ void cluster_start()
{
  xchg_t &x = xchg();
  if (threadIdx.x == 0) {
    mbar_init(&x.bar[0], 1);
    mbar_init(&x.bar[1], 1);
    mbar_fence_init();
  }
  if (threadIdx.x % 32 == 0) x.seq[threadIdx.x / 32] = 0;
  cluster_arrive_relaxed();
}

__device__ __forceinline__ void st_async_peer(float *slot, uint32_t cta, float v, uint64_t *bar)
{
  st_async_peer_f32(slot, cta, v, bar);
}
__device__ __forceinline__ void st_async_peer(float2 *slot, uint32_t cta, float2 v, uint64_t *bar)
{
  st_async_peer_f32x2(&slot->x, cta, v.x, v.y, bar);
}

// Every CTA's value v (the same in every thread of a CTA) in this CTA's
// shared memory, by rank: read before this thread's next CTA barrier.
template <typename T>
__device__ __forceinline__ const T *cluster_exchange(T v)
{
  static_assert(kCluster == 1 || (kRows == 1 && kWarps > 1), "cluster rows: one row per CTA, of several warps");
  xchg_t &x = xchg();
  uint32_t s = 0;   // lane 0 keeps its warp's count, the lanes get it by shuffle
  if (threadIdx.x % 32 == 0) s = x.seq[threadIdx.x / 32]++;
  s = __shfl_sync(0xffffffffu, s, 0);
  uint64_t *bar = &x.bar[s & 1];
  T *slot = reinterpret_cast<T *>(x.slot[s & 1]);
  if (threadIdx.x == 0) mbar_arrive_expect_tx(bar, kCluster * sizeof(T));
  if (threadIdx.x < kCluster) st_async_peer(&slot[cluster_rank()], threadIdx.x, v, bar);
  mbar_wait_cluster(bar, (s >> 1) & 1);
  return slot;
}

// The cluster's combination of v, the CTA's value (the same in every thread),
// by a butterfly over the ranks (op commutes: every thread gets the same bits).
template <typename T, typename Op>
__device__ __forceinline__ T cluster_combine(T v, Op op)
{
  const T *slot = cluster_exchange(v);
  return lane_fold<kCluster>(slot[threadIdx.x % kCluster], op);   // each lane a rank's, as cta_reduce
}

// The merge of the cluster's values by rank, lane l of every warp starting
// from rank l mod kCluster's (mine): a butterfly over the lanes, log2(kCluster)
// merges a thread where merging every rank in turn cost more instructions than
// a 16-CTA row's elements (ncu, H100: issue-bound).  The lower ranks' side is
// always merge's first operand, so every thread of the cluster gets the same bits.
template <typename T, typename Merge>
__device__ __forceinline__ T cluster_butterfly(T mine, Merge merge)
{
  static_assert(kCluster <= 32 && (kCluster & (kCluster - 1)) == 0, "a power of two of ranks within a warp");
  const int lane = threadIdx.x % 32;
#pragma unroll 1   // unrolled, 512-thread rows spill at 64 registers
  for (int step = 1; step < kCluster; step <<= 1) {
    T lo = mine, hi = shfl_xor(mine, step);
    if (lane & step) { const T t = lo; lo = hi; hi = t; }   // by value: a select of struct lvalues took local memory
    mine = merge(lo, hi);
  }
  return mine;
}

// A reduction over the CTA's part of a row: warp shuffles, then the row's
// warps through shared memory (red: kRedSlots per row, a slot per warp).
// Every thread of the CTA must call it when the row spans warps: it holds a
// CTA barrier.  The warps' slots are rewritten two reductions later, after
// the barrier of the one between.
template <typename T, typename Op>
__device__ __forceinline__ T cta_reduce(T v, T (*red)[kRedSlots], Op op)
{
  v = lane_fold<32>(v, op);
  if constexpr (kWarps > 1) {
    const int r = threadIdx.x / kThreads, w = threadIdx.x % kThreads / 32;
    if (threadIdx.x % 32 == 0) red[r][w] = v;
    __syncthreads();
    // each lane one warp's slot, then a butterfly: log2(kWarps) ops a thread
    // where adding every slot in turn took kWarps - 1 (ncu, layernorm_bwd 256 K:
    // ~30 of a row's 198 FADDs a thread); THREAD_COUNTS are powers of two
    v = lane_fold<kWarps>(red[r][threadIdx.x % kWarps], op);
  }
  return v;
}

// A row-wide reduction: the CTA's (cta_reduce), then, for a row split over a
// cluster, the CTAs' values by cluster_combine.  Combined in a fixed order so
// results do not vary run to run; every thread of the cluster calls it.
template <typename T, typename Op>
__device__ __forceinline__ T row_reduce(T v, T (*red)[kRedSlots], Op op)
{
  v = cta_reduce(v, red, op);
  if constexpr (kCluster > 1) v = cluster_combine(v, op);
  return v;
}

__device__ __forceinline__ float row_sum(float v, float (*red)[kRedSlots]) { return row_reduce(v, red, op_sum{}); }
__device__ __forceinline__ float row_max(float v, float (*red)[kRedSlots]) { return row_reduce(v, red, op_max{}); }
__device__ __forceinline__ float2 row_sum2(float2 v, float2 (*red)[kRedSlots]) { return row_reduce(v, red, op_sum2{}); }

// *slot = v in the CTA holding the row's first thread (rank 0 of a cluster),
// visible to it after the row's next reduction: the fence orders the store
// before that reduction's CTA barrier and exchange.
__device__ __forceinline__ void put_first(float *slot, float v)
{
  if constexpr (kCluster > 1) {
    st_peer_f32(slot, 0, v);
    fence_cluster();
  } else {
    *slot = v;
  }
}

// Reduction scratch of a row block: one slot per warp for each statistic,
// kept apart so one reduction's slots are never rewritten before every
// thread has read them (the next reduction's barrier comes first).
struct scratch_t { float m[kRows][kRedSlots], s[kRows][kRedSlots]; };

// Row-wide softmax statistics from each thread's: the row's max first (no
// exponentials), then each thread rescales its sum to it once and the sums
// are added.  Combining (max, sum) pairs at every step instead would cost two
// exponentials per shuffle and per warp, more than the elements' own.
__device__ __forceinline__ ms_t row_ms(ms_t v, scratch_t &red)
{
  const float m = row_max(v.m, red.m);
  const float s = v.m == -INFINITY ? 0.f : v.s * fast_exp2((v.m - m) * kLog2e);
  return { m, row_sum(s, red.s) };
}

// Two (max, sum relative to it) pairs as one; both of -inf (sums 0): that.
struct op_ms {
  __device__ float2 operator()(float2 a, float2 b) const
  {
    const float m = fmaxf(a.x, b.x);
    if (m == -INFINITY) return a;
    return make_float2(m, fmaf(a.y, fast_exp2((a.x - m) * kLog2e), b.y * fast_exp2((b.x - m) * kLog2e)));
  }
};

// Resident rows' statistics over the floats a thread holds: the row's max,
// then each element's exp2 once (left in f for the caller, 0 for the -inf
// fill), summed.  A row of -inf (or a dead row's fill) gets max -inf and sum 0.
// A row over a cluster exchanges each CTA's max and its sum relative to it
// once (its max, then its sum, paid two exchanges, each an mbarrier round
// trip), merged by cluster_butterfly: f is then relative to the CTA's max,
// and *f_scale (1 elsewhere) takes it to the row's.
__device__ __forceinline__ ms_t resident_ms(float (&f)[kElems], scratch_t &red, float *f_scale)
{
  float m = f[0];
#pragma unroll
  for (int e = 1; e < kElems; ++e) m = fmaxf(m, f[e]);
  m = kCluster > 1 ? cta_reduce(m, red.m, op_max{}) : row_max(m, red.m);
  const float ms = m == -INFINITY ? 0.f : m * kLog2e;
  float s = 0.f;
#pragma unroll
  for (int e = 0; e < kElems; ++e) {
    f[e] = fast_exp2(fmaf(f[e], kLog2e, -ms));
    s += f[e];
  }
  *f_scale = 1.f;
  if constexpr (kCluster == 1) {
    return { m, row_sum(s, red.s) };
  } else {
    const float2 *v = cluster_exchange(make_float2(m, cta_reduce(s, red.s, op_sum{})));
    const float2 ms = cluster_butterfly(v[threadIdx.x % kCluster], op_ms{});
    *f_scale = m == -INFINITY ? 0.f : fast_exp2((m - ms.x) * kLog2e);
    return { ms.x, ms.y };
  }
}

// Where this thread works: its row within the CTA and lane within the row.
struct place_t {
  int64_t row;   // global row index for the current row block
  int t;         // thread index within the row
  bool live;     // row < M (dead rows still join the CTA barriers)
  const raw_t *stage;   // bulk rows: this row's chunk in shared memory
  struct stream_t *q;   // streamed rows: the CTA's place in its chunk stream
};

// The row block this CTA (its cluster) starts at, and the stride between its blocks.
__device__ __forceinline__ int64_t first_block() { return blockIdx.x / kCluster; }
__device__ __forceinline__ int64_t block_stride() { return gridDim.x / kCluster; }

__device__ __forceinline__ place_t place(int64_t block, int64_t M)
{
  place_t p;
  p.row = block * kRows + threadIdx.x / kThreads;
  p.t = threadIdx.x % kThreads + (kCluster > 1 ? (int)cluster_rank() * kThreads : 0);
  p.live = p.row < M;
  p.stage = nullptr;
  p.q = nullptr;
  return p;
}

__device__ __forceinline__ const elem_t *row_in(const void *base, int64_t ld, const place_t &p)
{
  return static_cast<const elem_t *>(base) + (p.live ? p.row * ld : 0);
}

__device__ __forceinline__ elem_t *row_out(void *base, int64_t ld, const place_t &p)
{
  return static_cast<elem_t *>(base) + (p.live ? p.row * ld : 0);
}

// Asks L2 for this warp's accesses of a row (lane 0: one bulk prefetch per
// access, up to n) without waiting, so that the loads of a later row block
// find them there.  The ragged tail and unaligned rows are left to the loads.
__device__ __forceinline__ void prefetch_row(const elem_t *row, const place_t &p, int n)
{
  if (!p.live || threadIdx.x % 32 != 0) return;
#pragma unroll
  for (int j = 0; j < kNv; ++j) {
    const int i = access_index(0, j, p.t);
    const int bytes = (n - i < 32 * kVec ? n - i : 32 * kVec) * (int)sizeof(elem_t) / 16 * 16;
    if (bytes > 0 && reinterpret_cast<uintptr_t>(row + i) % 16 == 0) prefetch_l2(row + i, (uint32_t)bytes);
  }
}

]]

-- Resident rows held in registers: the row driver for modes "reg".
M.REG_ROWS = [[
// The chunk of a resident row this thread holds, from global memory; past n
// it reads as fill.  Q, the operand, matters to staged rows only.
template <int Q = 0>
__device__ __forceinline__ void load_row(const elem_t *row, const place_t &p, int n, raw_t (&r)[kNv], float fill)
{
  load_chunk(row, 0, p.t, n, r, fill);
}

// Resident rows: the CTA walks row blocks blockIdx.x, + gridDim.x, ...; with
// kPipe > 1 it loads the next block while it finishes this one, so loads stay
// in flight through the reduction and the stores.  Cluster rows (one CTA per
// SM, nothing else in flight while they reduce) call ahead(place) to ask L2
// for the next block's rows (prefetch_row) before they finish this one: on
// the H200 that took layernorm_bwd at N = 256 K from 0.98 to 1.70 TB/s.  The
// other rows have other CTAs' loads in flight; there it cost up to 8%
// (rmsnorm_bwd, N = 4096, 3.93 to 3.61 TB/s).  finish(place, row, k) gets
// k = 0, 1, 0, ... to alternate its reduction scratch, which makes a barrier
// between blocks unnecessary.  Hold means something to bulk rows only.
template <typename Row, bool Hold = false, typename Load, typename Ahead, typename Finish>
__device__ __forceinline__ void pipeline_rows(const kite_row_args &a, Load load, Ahead ahead, Finish finish)
{
  const int64_t M = a.M;
  const int64_t blocks = (M + kRows - 1) / kRows;
  int64_t b = first_block();
  if (b >= blocks) return;
  if constexpr (kPipe == 1) {   // one row block at a time, grid-strided (a persistent grid, or past the limit)
    if constexpr (kCluster > 1) cluster_start();
    int k = 0;
#pragma unroll 1
    for (; b < blocks; b += block_stride(), k ^= 1) {
      const place_t p = place(b, M);
      const Row row = load(p);
      if constexpr (kCluster > 1) {
        if (b + block_stride() < blocks) ahead(place(b + block_stride(), M));
        if (b == first_block()) cluster_wait();
      }
      finish(p, row, k);
    }
    return;
  }
  Row cur = load(place(b, M));
#pragma unroll 1
  for (int k = 0;; k ^= 1) {
    const int64_t nb = b + block_stride();
    Row nxt = {};
    if (kPipe > 1 && nb < blocks) nxt = load(place(nb, M));
    finish(place(b, M), cur, k);
    if (nb >= blocks) break;
    cur = kPipe > 1 ? nxt : load(place(nb, M));
    b = nb;
  }
}
]]

-- Resident rows staged in shared memory by bulk copies: the driver for mode "bulk".
M.BULK_ROWS = [[
// A CTA copies its part of each staged row in kCopies bulk copies of up to
// kCopyRaw accesses: the whole chunk at once in a CTA of its own, else its
// slice of each access j of the row's threads (j * kRowThreads + rank *
// kThreads on).
constexpr int kCopies = kCluster == 1 ? 1 : kNv;
constexpr int kCopyRaw = kCtaSlot / kCopies;

// The copies of this CTA's part of a row of n: the element each starts at,
// and its bytes, the copy's whole accesses (the tail access, under 16 bytes,
// its thread reads from global memory); total, their sum.
struct copies_t { int start[kCopies]; uint32_t bytes[kCopies], total; };

__device__ __forceinline__ copies_t cta_copies(int n)
{
  const int rank = kCluster > 1 ? (int)cluster_rank() : 0;
  copies_t c;
  c.total = 0;
#pragma unroll
  for (int j = 0; j < kCopies; ++j) {
    c.start[j] = (j * kRowThreads + rank * kThreads) * kVec;
    const int whole = (n - c.start[j]) / kVec;
    c.bytes[j] = (uint32_t)(whole < 0 ? 0 : whole < kCopyRaw ? whole : kCopyRaw) * (uint32_t)sizeof(raw_t);
    c.total += c.bytes[j];
  }
  return c;
}

// Thread 0 only: copies the CTA's part of the rows of `block` (each staged
// operand) into stage s and arms its barrier with their bytes (zero bytes:
// the arrival alone completes the phase).
__device__ __forceinline__ void stage_issue(const kite_row_args &a, int64_t block, int s)
{
  const int64_t first = block * kRows;
  const int rows = (int)(a.M - first < kRows ? a.M - first : kRows);
  const copies_t c = cta_copies((int)a.N);
  mbar_arrive_expect_tx(&stage_full[s], c.total * (uint32_t)(rows * kStagedOps));
  if (c.total == 0) return;
#pragma unroll
  for (int q = 0; q < kStagedOps; ++q)
    for (int r = 0; r < rows; ++r) {
      raw_t *dst = stage_at(s) + (q * kRows + r) * kCtaSlot;
      const elem_t *src = staged_row(a, q, first + r);
#pragma unroll
      for (int j = 0; j < kCopies; ++j)
        if (c.bytes[j]) bulk_load(dst + j * kCopyRaw, src + c.start[j], c.bytes[j], &stage_full[s]);
    }
}

// The chunk of a resident row this thread holds of staged operand Q (x: 0),
// from its stage (the tail access from global memory).
template <int Q = 0>
__device__ __forceinline__ void load_row(const elem_t *row, const place_t &p, int n, raw_t (&r)[kNv], float fill)
{
  static_assert(Q < kStagedOps, "the operand is staged");
  load_staged(p.stage + Q * kRows * kCtaSlot, row, 0, p.t, n, r, fill);
}

// Once every thread has read stage s (block b) out: the block kPipe ahead
// copied into it.
__device__ __forceinline__ void stage_refill(const kite_row_args &a, int64_t b, int64_t blocks, int s)
{
  __syncthreads();
  const int64_t nb = b + (int64_t)kPipe * block_stride();
  if (threadIdx.x == 0 && nb < blocks) {
    fence_proxy_async_smem();
    stage_issue(a, nb, s);
  }
}

// Bulk rows: the CTA (its cluster) walks row blocks first_block(), +
// block_stride(), ... with kPipe stages in shared memory, each refilled by
// thread 0 as soon as every thread has taken its accesses out of it, so kPipe
// - 1 blocks stay in flight through each block's reduction and stores.  Same
// contract as the register driver: load(place) reads the rows (through
// load_row), finish(place, row, k); the stages are ahead already, so ahead is
// not called.  A cluster's CTAs copy their own slices; they write into each
// other's shared memory (the reductions) only once all have started.  Hold:
// finish reads the rows out of their stage itself (load, where it uses them:
// registers it needs for other things), gets an empty row, and the stage is
// refilled once it is done; kPipe - 1 blocks in flight through it, not kPipe.
template <typename Row, bool Hold = false, typename Load, typename Ahead, typename Finish>
__device__ __forceinline__ void pipeline_rows(const kite_row_args &a, Load load, Ahead, Finish finish)
{
  const int64_t blocks = (a.M + kRows - 1) / kRows;
  if (first_block() >= blocks) return;
  stages_init();
  if constexpr (kCluster > 1) cluster_start();
  if (threadIdx.x == 0) {
    for (int s = 0; s < kPipe; ++s) {
      const int64_t b = first_block() + (int64_t)s * block_stride();
      if (b < blocks) stage_issue(a, b, s);
    }
  }
  int s = 0, k = 0;
  uint32_t parity = 0;
  for (int64_t b = first_block(); b < blocks; b += block_stride()) {
    mbar_wait(&stage_full[s], parity);
    place_t p = place(b, a.M);
    p.stage = stage_at(s) + threadIdx.x / kThreads * kCtaSlot;
    const Row cur = Hold ? Row{} : load(p);
    if constexpr (!Hold) stage_refill(a, b, blocks, s);
    if constexpr (kCluster > 1)
      if (b == first_block()) cluster_wait();
    finish(p, cur, k);
    if constexpr (Hold) stage_refill(a, b, blocks, s);
    k ^= 1;
    if (++s == kPipe) { s = 0; parity ^= 1; }
  }
}
]]

-- The staged operands' rows, from the kite_row_args fields the op names
-- (opts.staged): what a bulk row's stages hold.
function M.staged_rows(p, opts)
  local names, base, ld = {}, {}, {}
  for q = 1, M.staged_ops(p, opts) do
    local f = opts.staged[q]
    names[q], base[q], ld[q] = f, "a." .. f, "a.ld" .. f
  end
  return string.format([[
// Row `row` of staged operand q (%s).
__device__ __forceinline__ const elem_t *staged_row(const kite_row_args &a, int q, int64_t row)
{
  const void *const base[kStagedOps] = { %s };
  const int64_t ld[kStagedOps] = { %s };
  return static_cast<const elem_t *>(base[q]) + row * ld[q];
}
]], table.concat(names, ", "), table.concat(base, ", "), table.concat(ld, ", "))
end

-- What staged drivers share.
M.STAGED = [[
__shared__ uint64_t stage_full[kPipe];   // one barrier per stage: its bytes have landed

// Stage s of the ring, after the row cache.
__device__ __forceinline__ raw_t *stage_at(int s) { return row_cache + kCacheRaw + s * kStageRaw; }

// Thread 0 initialises the stage barriers; the CTA waits until it has.
__device__ __forceinline__ void stages_init()
{
  if (threadIdx.x == 0) {
    for (int s = 0; s < kPipe; ++s) mbar_init(&stage_full[s], 1);
    mbar_fence_init();
  }
  __syncthreads();
}

// Bytes of a chunk of n elements the bulk copy moves: its whole accesses.  The
// rest (under 16 bytes) is read from global memory by the thread that owns it.
__device__ __forceinline__ uint32_t bulk_bytes(int n)
{
  return (uint32_t)(n / kVec) * (uint32_t)sizeof(raw_t);
}

// Access j of this thread (t in the row, as place() has it) in a staged
// chunk starting at element base of the row: from the stage (the CTA's part,
// [access][thread]) while whole, the tail from global memory.
__device__ __forceinline__ void load_staged(const raw_t *stage, const elem_t *row, int base, int t, int n,
                                            raw_t (&r)[kNv], float fill = 0.f)
{
#pragma unroll
  for (int j = 0; j < kNv; ++j) {
    const int i = access_index(base, j, t);
    if (i + kVec <= n) r[j] = stage[j * kThreads + t % kThreads];
    else r[j] = i < n ? load_raw(row, i, n, fill) : splat(fill);
  }
}
]]

-- Streaming rows read from global memory: the driver for modes other than "stream".
M.LOOP_ROWS = [[
// First pass: chunk c of the row into r, kept in the cache when it has room.
__device__ __forceinline__ void load_first(const elem_t *row, int c, const place_t &p, int n, raw_t (&r)[kNv])
{
  load_chunk(row, c * kChunk, p.t, n, r);
  if (c < kCacheChunks) cache_put(c, p.t, r);
}

// Second pass: chunk c again, from the cache when the first pass kept it,
// else from global memory (much of it still in L2).
__device__ __forceinline__ void load_again(const elem_t *row, int c, const place_t &p, int n, raw_t (&r)[kNv])
{
  if (c < kCacheChunks) cache_get(c, p.t, r);
  else load_chunk(row, c * kChunk, p.t, n, r);
}

// Runs body(place) for each row block this CTA owns; the barrier between
// blocks keeps the reduction scratch from being overwritten early.
template <typename F>
__device__ __forceinline__ void for_row_blocks(const kite_row_args &a, F body)
{
  const int64_t blocks = (a.M + kRows - 1) / kRows;
  for (int64_t b = blockIdx.x; b < blocks; b += gridDim.x) {
    body(place(b, a.M));
    if (b + gridDim.x < blocks) __syncthreads();
  }
}

// Runs body(place, c0, c1) for each piece of a row block this CTA owns:
// chunks c0 up to c1 of its rows (all of them unless rows are split), pieces
// blockIdx.x, + gridDim.x, ...  No barrier between pieces: for ops without a
// reduction over the row.
template <typename F>
__device__ __forceinline__ void for_row_pieces(const kite_row_args &a, F body)
{
  const int64_t splits = row_splits(a.N), pieces = (a.M + kRows - 1) / kRows * splits;
  const int chunks = (int)((a.N + kChunk - 1) / kChunk);
  for (int64_t b = blockIdx.x; b < pieces; b += gridDim.x) {
    const int c0 = kSplitChunks * (int)(b % splits);
    body(place(b / splits, a.M), c0, kSplitChunks == 0 || c0 + kSplitChunks > chunks ? chunks : c0 + kSplitChunks);
  }
}
]]

-- Streaming rows whose chunks arrive by bulk copies: the driver for mode "stream".
M.STREAM_ROWS = [[
static_assert(kRows == 1, "a streamed CTA reads one row at a time");
static_assert((kPipe & (kPipe - 1)) == 0, "stage and phase come from a chunk count");

// The CTA's chunk stream: its rows blockIdx.x, + gridDim.x, ..., each cut
// into chunks of kChunk, go through kPipe stages in order; an op with a
// second pass gets the chunks the row cache does not hold a second time,
// after the row's first pass, so its second pass waits on no round trip
// either.  Thread 0 copies chunks kPipe ahead of the CTA; its cursor lives
// in shared memory so that it costs the other threads no registers.
struct stream_cursor_t { int64_t row; int c, stage, pass; };
__shared__ stream_cursor_t stream_next;   // thread 0's: the next chunk to copy

struct stream_t {
  const kite_row_args *a;
  uint32_t k;   // chunks the CTA has read: stage k % kPipe, phase (k / kPipe) & 1
};

// Thread 0 only: copies the stream's next chunk, if any, and arms its stage.
__device__ __forceinline__ void stream_issue(const kite_row_args &a)
{
  stream_cursor_t nx = stream_next;
  if (nx.row >= a.M) return;
  const int n = (int)a.N, base = nx.c * kChunk;
  const uint32_t bytes = bulk_bytes(n - base < kChunk ? n - base : kChunk);
  mbar_arrive_expect_tx(&stage_full[nx.stage], bytes);
  const elem_t *src = static_cast<const elem_t *>(a.x) + nx.row * a.ldx + base;
  if (bytes) bulk_load(stage_at(nx.stage), src, bytes, &stage_full[nx.stage]);
  if (++nx.stage == kPipe) nx.stage = 0;
  if ((++nx.c) * kChunk >= n) {   // the end of a pass over the row
    if (kTwoPass && nx.pass == 0 && kCacheChunks * kChunk < n) {
      nx.pass = 1;
      nx.c = kCacheChunks;
    } else {
      nx.pass = 0;
      nx.c = 0;
      nx.row += gridDim.x;
    }
  }
  stream_next = nx;
}

// Chunk c of the row, the next in the stream; its stage goes back to thread
// 0 for the chunk kPipe ahead once every thread has its accesses.
__device__ __forceinline__ void stream_take(const elem_t *row, int c, const place_t &p, int n, raw_t (&r)[kNv])
{
  stream_t &q = *p.q;
  const int s = (int)(q.k % kPipe);
  mbar_wait(&stage_full[s], (q.k / kPipe) & 1);
  load_staged(stage_at(s), row, c * kChunk, p.t, n, r);
  __syncthreads();
  if (threadIdx.x == 0) {
    fence_proxy_async_smem();
    stream_issue(*q.a);
  }
  ++q.k;
}

// First pass: chunk c from the stream, kept in the cache when it has room.
__device__ __forceinline__ void load_first(const elem_t *row, int c, const place_t &p, int n, raw_t (&r)[kNv])
{
  stream_take(row, c, p, n, r);
  if (c < kCacheChunks) cache_put(c, p.t, r);
}

// Second pass: chunk c from the cache, or from the stream a second time.
__device__ __forceinline__ void load_again(const elem_t *row, int c, const place_t &p, int n, raw_t (&r)[kNv])
{
  if (c < kCacheChunks) cache_get(c, p.t, r);
  else stream_take(row, c, p, n, r);
}

// Runs body(place) for each row this CTA owns; body reads each chunk of the
// row once through load_first, in order, and (an op with a second pass)
// then each again through load_again, in order (the stream's contract).
template <typename F>
__device__ __forceinline__ void for_row_blocks(const kite_row_args &a, F body)
{
  if ((int64_t)blockIdx.x >= a.M) return;
  if (threadIdx.x == 0) stream_next = { (int64_t)blockIdx.x, 0, 0, 0 };   // thread 0's alone
  stages_init();
  if (threadIdx.x == 0)
    for (int s = 0; s < kPipe; ++s) stream_issue(a);
  stream_t q = { &a, 0 };
  for (int64_t b = blockIdx.x; b < a.M; b += gridDim.x) {
    place_t p = place(b, a.M);
    p.q = &q;
    body(p);
    if (b + gridDim.x < a.M) __syncthreads();
  }
}
]]

return M
