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
-- like "reg", but the row arrives in shared memory by bulk copies (1-D TMA)
-- issued `pipe` row blocks ahead: bytes in flight cost shared memory, not
-- registers.  mode "stream" is "loop" with the chunks arriving the same way,
-- `pipe` chunks ahead across row boundaries.
M.THREAD_COUNTS = { 32, 64, 128, 256, 512, 1024 }
M.CTA_THREADS = 256   -- smallest CTA: keeps enough warps per SM for small rows
-- Longest row: element indices (int in the kernels) stay clear of overflow
-- even one chunk past the end.
M.N_MAX = 1 << 30

function M.axes()
  return {
    dtype = { "bf16", "f16", "f32" },
    mode = { "reg", "loop", "bulk", "stream" },
    threads = M.THREAD_COUNTS,
    rows = { 1, 2, 4, 8 },
    nv = { 1, 2, 4 },
    access = { "v16", "e1" },
    cache = { 0, 3, 6 },
    pipe = { 1, 2, 4 },
  }
end

M.SMEM_LIMIT = 227 * 1024
M.CACHE_BYTES = 96 * 1024    -- the row cache of a streaming variant: two CTAs fit an SM

-- Elements per access for a point.
function M.vec(p)
  if p.access == "e1" then return 1 end
  return 16 // dtypes[p.dtype].size
end

-- The register ladder: small rows use few threads and many rows per CTA;
-- long rows use more threads and more accesses per thread: 4, or 2 for an op
-- with two operands in its output pass (rmsnorm spills at 64 registers with 4).
local function ladder_ok(p, opts)
  local most = 4 // opts.stream_operands
  -- tiny rows always pipeline; a one-warp row of 2 or 4 accesses needs no
  -- CTA barrier at all (its reduction is shuffles only)
  -- (ops with an output pass spill there at 64 registers: ptxas)
  if p.threads == 32 then
    return (p.nv == 1 and p.pipe == 2) or (p.nv > 1 and p.pipe == 1 and not opts.two_pass)
  end
  if p.threads <= 128 then return p.nv == 2 or (p.nv == 4 and p.pipe == 1 and most == 4) end
  if p.pipe > 1 then return p.nv == 2 end   -- two row blocks in flight: fewer accesses each
  if p.threads == 256 then return p.nv == 2 or p.nv == most end
  return p.nv == most
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
  if M.staged(p) then return M.STAGED_THREADS end
  if opts.occupancy then return opts.occupancy end
  return (M.footprint(p) <= 32 and p.rows <= 4) and 1536 or 1024
end

-- Modes whose rows arrive by bulk copies into shared-memory stages.
function M.staged(p) return p.mode == "bulk" or p.mode == "stream" end

-- Modes that hold one chunk per row (the whole row).
function M.resident(p) return p.mode == "reg" or p.mode == "bulk" end

-- Dynamic shared memory: the row cache of a streaming variant, and the
-- stages of a staged one (pipe stages of `rows` rows, one chunk each).
function M.smem(p)
  local cache = p.cache * p.threads * p.nv * 16
  if not M.staged(p) then return cache end
  return cache + p.pipe * p.rows * M.chunk(p) * dtypes[p.dtype].size
end

-- Static shared memory a resident variant declares, bounded from above: the
-- reduction scratch and barriers (1 KB), and w's slots when the op keeps it
-- there (opts.shared_w).
function M.static_smem(p, opts)
  local w = (opts.shared_w and M.resident(p)) and p.nv * p.threads * p.rows * 16 or 0
  return 1024 + w
end

M.SM_SMEM = 228 * 1024       -- shared memory of one SM, 1 KB of it reserved per CTA
M.STAGED_THREADS = 1024      -- threads per SM a staged variant aims at (64 registers)

-- CTAs per SM a variant is built for (the __launch_bounds__ minimum).
function M.min_ctas(p, opts)
  local cta = p.threads * p.rows
  local by_threads = M.occupancy(p, opts) // cta
  if not M.staged(p) then return by_threads end
  return math.min(by_threads, M.SM_SMEM // (M.smem(p) + M.static_smem(p, opts) + 1024))
end

-- What each row op needs of the space: two_pass when it writes an output row
-- (reading x a second time), stream_operands = rows a streaming thread holds
-- at once in the output pass (x, and w for rmsnorm), occupancy to fix the
-- threads per SM (cross-entropy's target fetch needs the registers of the
-- 1024-thread budget), pipe_first = the pipe value ranked first (measured:
-- rmsnorm gains from pipelining with w in shared memory; softmax and
-- cross-entropy ran faster with one row block per CTA and more CTAs),
-- shared_w when resident variants keep w in shared memory.
M.OPS = {
  rmsnorm = { two_pass = true, stream_operands = 2, occupancy = 1024, pipe_first = 2, shared_w = true,
              bulk_first = { { from = 1, to = 16384, pipe = 4 } } },
  softmax = { two_pass = true, stream_operands = 1, pipe_first = 1,
              bulk_first = { { from = 1, to = 8192, pipe = 4 }, { from = 16384, to = 16384, pipe = 2 } } },
  cross_entropy = { two_pass = false, stream_operands = 1, occupancy = 1024, pipe_first = 1,
                    bulk_first = { { from = 16384, to = 16384, pipe = 2 } }, wide_first = true },
}

-- Staged variants: 16-byte accesses, 2 or 4 stages, at least one CTA per SM
-- within the shared memory.  Bulk rows follow the resident rows' register
-- ladder (tiny rows take one access); streamed rows take 512 threads and two
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
  if p.threads <= 128 then return p.nv == (p.threads == 32 and 1 or 2) end
  return ladder_ok({ threads = p.threads, nv = p.nv, pipe = 1 }, opts)
end

function M.valid(p, opts)
  if M.smem(p) + M.static_smem(p, opts) > M.SMEM_LIMIT then return false, "shared memory" end
  if p.threads * p.rows ~= math.max(M.CTA_THREADS, p.threads) then
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

function M.chunk(p) return p.threads * p.nv * M.vec(p) end

-- Dispatch metadata: the N range, the alignment the variant needs of every
-- pointer and row stride, and its rank (lower is preferred when several fit;
-- among equal ranks the runtime takes the smallest n_max).  The ranks follow
-- what kite-bench --variants measured on an H200 (bf16, bench/RESULTS.md,
-- session 3 run 3 and session 4):
--   0  bulk rows whose chunk lies in one of opts.bulk_first's ranges, with
--      that range's pipe depth (rmsnorm: up to 16384, 4 stages; softmax: up
--      to 8192 with 4 stages and 16384 with 2; cross-entropy: 16384, 2
--      stages); otherwise the resident rows of the op's faster pipelining
--      choice (opts.pipe_first); for cross-entropy (opts.wide_first) the wide
--      small rows (M.wide_small) in place of the ladder's rows of twice the
--      threads (session 4: 2.21 v. 2.10 TB/s at N = 1024, 2.25 v. 2.09 at 4096)
--   1  the other resident rows, those the rows above replace, and the wide
--      small rows of softmax and rmsnorm (not faster where measured)
--   2  streamed rows (stream mode, 2 stages, the op's row cache)
--   3  streaming rows by plain loads (16-byte accesses)
--   4  resident rows of 1024 threads: slower than streaming where both fit
--   5  element-wise streaming, for unaligned data
--   6  the other staged rows: measured slower, never preferred
local function bulk_first(p, opts)
  local c = M.chunk(p)
  for _, b in ipairs(opts.bulk_first) do
    if c >= b.from and c <= b.to and (p.mode ~= "bulk" or p.pipe == b.pipe) then return true end
  end
  return false
end

-- Resident rows of 128 threads or fewer with more accesses than the ladder's
-- first choice: one-warp rows of 2 or 4 accesses, 64 and 128 threads with 4.
function M.wide_small(p)
  return p.threads <= 128 and p.nv > (p.threads == 32 and 1 or 2)
end

local function reg_rank(p, opts)
  if p.threads == 1024 then return 4 end
  if p.pipe ~= opts.pipe_first or bulk_first(p, opts) then return 1 end
  if M.wide_small(p) then return opts.wide_first and 0 or 1 end
  if opts.wide_first and p.nv == 2 and p.threads >= 64 and p.threads <= 256 then return 1 end
  return 0
end

function M.meta(p, opts)
  local size = dtypes[p.dtype].size
  if p.mode == "bulk" then
    local first = bulk_first(p, opts)
    return { n_min = 1, n_max = M.chunk(p), align = 16, rank = first and 0 or 6 }
  end
  if p.mode == "stream" then
    local cache = opts.two_pass and 3 or 0
    return { n_min = 1, n_max = M.N_MAX, align = 16, rank = (p.pipe == 2 and p.cache == cache) and 2 or 6 }
  end
  if p.mode == "reg" then
    return { n_min = 1, n_max = M.chunk(p), align = 16, rank = reg_rank(p, opts) }
  end
  if p.access == "v16" then
    return { n_min = 1, n_max = M.N_MAX, align = 16, rank = 3 }
  end
  return { n_min = 1, n_max = M.N_MAX, align = size, rank = 5 }
end

M.PIPE_BYTES = 64   -- most data a pipelining thread holds: more spills at 64 registers

function M.name(op)
  return op .. "_${dtype}_${mode}_t${threads}_r${rows}_n${nv}_${access}_c${cache}_p${pipe}"
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
-- helpers every row op uses.  p is the point (P in a template).
function M.prelude(op, p)
  local opts = M.OPS[op]
  local d = dtypes[p.dtype]
  local vec = M.vec(p)
  local out = {}
  local function add(s) out[#out + 1] = s end
  add(dtypes.includes())
  add("#include <atomic>")
  add('#include "kite.h"\n#include "kite_launch.h"\n')
  add("// Not every op uses every shared helper below.\n#pragma nv_diag_suppress 177\n\nnamespace {\n")
  add(string.format([[
typedef %s elem_t;
constexpr int kThreads = %d;            // threads per row
constexpr int kRows = %d;               // rows per CTA
constexpr int kNv = %d;                 // accesses per thread per chunk
constexpr int kVec = %d;                // elements per access
constexpr bool kResident = %s;        // one chunk per row, held in registers
constexpr bool kStaged = %s;          // chunks arrive in shared-memory stages by bulk copies
constexpr int kWarps = kThreads / 32;   // warps per row
constexpr int kChunk = kThreads * kNv * kVec;
constexpr int kCtaThreads = kThreads * kRows;
constexpr int kMinCtas = %d;            // CTAs per SM it is built for (registers, shared memory)
constexpr int kPipe = %d;               // row blocks a CTA has in flight (> 1: persistent, prefetching)
constexpr int kCacheChunks = %d;        // chunks the output pass rereads from shared memory
]], d.ctype, p.threads, p.rows, p.nv, vec, tostring(M.resident(p)), tostring(M.staged(p)),
    M.min_ctas(p, opts), p.pipe, p.cache))
  add(d.convert())
  add(M.DEVICE)
  add(launch.RAISE_SMEM)
  if M.staged(p) then
    add(ptx.helpers({ "SMEM", "MBARRIER", "BULK" }))
    add(M.STAGED)
  end
  -- every variant carries a resident and a streaming row driver: the kernel
  -- names both, in the two branches of `if constexpr (kResident)`
  add(p.mode == "bulk" and M.BULK_ROWS or M.REG_ROWS)
  add(p.mode == "stream" and M.STREAM_ROWS or M.LOOP_ROWS)
  add("}  // namespace\n")
  return table.concat(out, "\n")
end

-- Launcher: one CTA per kRows rows, grid-strided past the grid limit.
function M.launcher(name, kernel)
  return string.format([[
extern "C" cudaError_t kite_v_%s(const void *args, cudaStream_t stream)
{
  const kite_row_args *a = static_cast<const kite_row_args *>(args);
  const int64_t blocks = (a->M + kRows - 1) / kRows;
  int64_t limit = kMaxGrid;
  if (kPipe > 1) {   // persistent: as many CTAs as fit the GPU at once
    int sms;
    const cudaError_t e = kite__device_sms(&sms);
    if (e != cudaSuccess) return e;
    limit = (int64_t)sms * kMinCtas;
  }
  const unsigned grid = (unsigned)(blocks < limit ? blocks : limit);
  if (kDynSmem > 0) {   // static shared memory counts against the 48 KB default too
    const cudaError_t e = raise_smem(%s, kDynSmem);
    if (e != cudaSuccess) return e;
  }
  %s<<<grid, kCtaThreads, kDynSmem, stream>>>(*a);
  return cudaGetLastError();
}]], name, kernel, kernel)
end

M.DEVICE = [[
constexpr int64_t kMaxGrid = 2147483647;
constexpr float kLog2e = 1.4426950408889634f;

// kVec elements as loaded: one 16-byte access, or one element.
struct __align__(kVec * sizeof(elem_t)) raw_t { elem_t e[kVec]; };

constexpr int kSlot = kChunk / kVec;     // accesses in one row's chunk
constexpr int kStageRaw = kRows * kSlot;  // accesses in one stage
constexpr int kCacheRaw = kCacheChunks * kNv * kThreads;
constexpr int kDynSmem = (kCacheRaw + (kStaged ? kPipe * kStageRaw : 0)) * (int)sizeof(raw_t);
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

// Access starting at element i of a row of n: whole, or element-wise at the tail.
__device__ __forceinline__ raw_t load_raw(const elem_t *row, int i, int n)
{
  if (i + kVec <= n) return ld_stream(row + i);
  raw_t r;
#pragma unroll
  for (int e = 0; e < kVec; ++e) r.e[e] = i + e < n ? row[i + e] : from_f32(0.f);
  return r;
}

// Elements of an access as floats; those at or past n read as fill.
__device__ __forceinline__ void to_floats(const raw_t &r, int i, int n, float fill, float (&f)[kVec])
{
  if (i + kVec <= n) {
#pragma unroll
    for (int e = 0; e < kVec; ++e) f[e] = to_f32(r.e[e]);
    return;
  }
#pragma unroll
  for (int e = 0; e < kVec; ++e) f[e] = i + e < n ? to_f32(r.e[e]) : fill;
}

__device__ __forceinline__ void store_floats(elem_t *row, int i, int n, const float (&f)[kVec])
{
  raw_t r;
#pragma unroll
  for (int e = 0; e < kVec; ++e) r.e[e] = from_f32(f[e]);
  if (i + kVec <= n) {
    *reinterpret_cast<raw_t *>(row + i) = r;
    return;
  }
#pragma unroll
  for (int e = 0; e < kVec; ++e)
    if (i + e < n) row[i + e] = r.e[e];
}

// Element index of a thread's j-th access in the chunk starting at base.
__device__ __forceinline__ int access_index(int base, int j, int t)
{
  return base + (j * kThreads + t) * kVec;
}

__device__ __forceinline__ void load_chunk(const elem_t *row, int base, int t, int n, raw_t (&r)[kNv])
{
#pragma unroll
  for (int j = 0; j < kNv; ++j) {
    const int i = access_index(base, j, t);
    if (i < n) r[j] = load_raw(row, i, n);
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

// Second pass: chunk c again, from the cache when the first pass kept it.
__device__ __forceinline__ void load_again(const elem_t *row, int c, int t, int n, raw_t (&r)[kNv])
{
  if (c < kCacheChunks) cache_get(c, t, r);
  else load_chunk(row, c * kChunk, t, n, r);
}

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

__device__ __forceinline__ float warp_sum(float v)
{
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ __forceinline__ float warp_max(float v)
{
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Row-wide reductions: warp shuffles, then the row's warps through shared
// memory, summed in a fixed order so results do not vary run to run.  Every
// thread of the CTA must call them (they hold a CTA barrier).
__device__ __forceinline__ float row_sum(float v, float (*red)[kWarps])
{
  v = warp_sum(v);
  if constexpr (kWarps == 1) return v;
  const int r = threadIdx.x / kThreads, w = threadIdx.x % kThreads / 32;
  if (threadIdx.x % 32 == 0) red[r][w] = v;
  __syncthreads();
  float t = 0.f;
#pragma unroll
  for (int k = 0; k < kWarps; ++k) t += red[r][k];
  return t;
}

// Row-wide softmax statistics from each thread's: the row's max first (no
// exponentials), then each thread rescales its sum to it once and the sums
// are added.  Combining (max, sum) pairs at every step instead would cost two
// exponentials per shuffle and per warp, more than the elements' own.  Two
// CTA barriers when the row spans warps; the scratch's .m and .s are written
// after different barriers, so one row's sums never meet the next's maxima.
__device__ __forceinline__ ms_t row_ms(ms_t v, ms_t (*red)[kWarps])
{
  const int r = threadIdx.x / kThreads, w = threadIdx.x % kThreads / 32;
  float m = warp_max(v.m);
  if constexpr (kWarps > 1) {
    if (threadIdx.x % 32 == 0) red[r][w].m = m;
    __syncthreads();
    m = red[r][0].m;
#pragma unroll
    for (int k = 1; k < kWarps; ++k) m = fmaxf(m, red[r][k].m);
  }
  float s = v.m == -INFINITY ? 0.f : v.s * fast_exp2((v.m - m) * kLog2e);
  s = warp_sum(s);
  if constexpr (kWarps > 1) {
    if (threadIdx.x % 32 == 0) red[r][w].s = s;
    __syncthreads();
    s = 0.f;
#pragma unroll
    for (int k = 0; k < kWarps; ++k) s += red[r][k].s;
  }
  return { m, s };
}

// Where this thread works: its row within the CTA and lane within the row.
struct place_t {
  int64_t row;   // global row index for the current row block
  int t;         // thread index within the row
  bool live;     // row < M (dead rows still join the CTA barriers)
  const raw_t *stage;   // bulk rows: this row's chunk in shared memory
  struct stream_t *q;   // streamed rows: the CTA's place in its chunk stream
};

__device__ __forceinline__ place_t place(int64_t block, int64_t M)
{
  place_t p;
  p.row = block * kRows + threadIdx.x / kThreads;
  p.t = threadIdx.x % kThreads;
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

]]

-- Resident rows held in registers: the row driver for modes "reg".
M.REG_ROWS = [[
// The chunk of a resident row this thread holds, from global memory.
__device__ __forceinline__ void load_row(const elem_t *row, const place_t &p, int n, raw_t (&r)[kNv])
{
  load_chunk(row, 0, p.t, n, r);
}

// Resident rows: the CTA walks row blocks blockIdx.x, + gridDim.x, ...; with
// kPipe > 1 it loads the next block while it finishes this one, so loads stay
// in flight through the reduction and the stores.  finish(place, row, k) gets
// k = 0, 1, 0, ... to alternate its reduction scratch, which makes a barrier
// between blocks unnecessary.
template <typename Row, typename Load, typename Finish>
__device__ __forceinline__ void pipeline_rows(const kite_row_args &a, Load load, Finish finish)
{
  const int64_t M = a.M;
  const int64_t blocks = (M + kRows - 1) / kRows;
  int64_t b = blockIdx.x;
  if (b >= blocks) return;
  Row cur = load(place(b, M));
#pragma unroll 1
  for (int k = 0;; k ^= 1) {
    const int64_t nb = b + gridDim.x;
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
// Thread 0 only: copies the rows of `block` into stage s and arms its barrier
// with their bytes (zero bytes: the arrival alone completes the phase).
__device__ __forceinline__ void stage_issue(const kite_row_args &a, int64_t block, int s)
{
  const int64_t first = block * kRows;
  const int rows = (int)(a.M - first < kRows ? a.M - first : kRows);
  const uint32_t bytes = bulk_bytes((int)a.N);
  mbar_arrive_expect_tx(&stage_full[s], bytes * (uint32_t)rows);
  if (bytes == 0) return;
  const elem_t *x = static_cast<const elem_t *>(a.x);
  for (int r = 0; r < rows; ++r) bulk_load(stage_at(s) + r * kSlot, x + (first + r) * a.ldx, bytes, &stage_full[s]);
}

// The chunk of a resident row this thread holds, from its stage (the tail
// access from global memory).
__device__ __forceinline__ void load_row(const elem_t *row, const place_t &p, int n, raw_t (&r)[kNv])
{
  load_staged(p.stage, row, 0, p.t, n, r);
}

// Bulk rows: the CTA walks row blocks blockIdx.x, + gridDim.x, ... with
// kPipe stages in shared memory, each refilled by thread 0 as soon as every
// thread has taken its accesses out of it, so kPipe - 1 blocks stay in flight
// through each block's reduction and stores.  Same contract as the register
// driver: load(place) reads the row (through load_row), finish(place, row, k).
template <typename Row, typename Load, typename Finish>
__device__ __forceinline__ void pipeline_rows(const kite_row_args &a, Load load, Finish finish)
{
  const int64_t blocks = (a.M + kRows - 1) / kRows;
  if ((int64_t)blockIdx.x >= blocks) return;
  stages_init();
  if (threadIdx.x == 0) {
    for (int s = 0; s < kPipe; ++s) {
      const int64_t b = blockIdx.x + (int64_t)s * gridDim.x;
      if (b < blocks) stage_issue(a, b, s);
    }
  }
  int s = 0, k = 0;
  uint32_t parity = 0;
  for (int64_t b = blockIdx.x; b < blocks; b += gridDim.x) {
    mbar_wait(&stage_full[s], parity);
    place_t p = place(b, a.M);
    p.stage = stage_at(s) + threadIdx.x / kThreads * kSlot;
    const Row cur = load(p);
    __syncthreads();   // stage s is read out: refill it
    const int64_t nb = b + (int64_t)kPipe * gridDim.x;
    if (threadIdx.x == 0 && nb < blocks) {
      fence_proxy_async_smem();
      stage_issue(a, nb, s);
    }
    finish(p, cur, k);
    k ^= 1;
    if (++s == kPipe) { s = 0; parity ^= 1; }
  }
}
]]

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

// Access j of this thread in a staged chunk starting at element base of the
// row: from the stage while whole, the tail from global memory.
__device__ __forceinline__ void load_staged(const raw_t *stage, const elem_t *row, int base, int t, int n,
                                            raw_t (&r)[kNv])
{
#pragma unroll
  for (int j = 0; j < kNv; ++j) {
    const int i = access_index(base, j, t);
    if (i + kVec <= n) r[j] = stage[j * kThreads + t];
    else if (i < n) r[j] = load_raw(row, i, n);
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
]]

-- Streaming rows whose chunks arrive by bulk copies: the driver for mode "stream".
M.STREAM_ROWS = [[
static_assert(kRows == 1, "a streamed CTA reads one row at a time");
static_assert((kPipe & (kPipe - 1)) == 0, "stage and phase come from a chunk count");

// The CTA's chunk stream: its rows blockIdx.x, + gridDim.x, ..., each cut
// into chunks of kChunk, go through kPipe stages in order.  Thread 0 copies
// chunks kPipe ahead of the CTA; its cursor lives in shared memory so that
// it costs the other threads no registers.
struct stream_cursor_t { int64_t row; int c, stage; };
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
  if ((++nx.c) * kChunk >= n) { nx.c = 0; nx.row += gridDim.x; }
  stream_next = nx;
}

// First pass: chunk c of the row, the next in the stream; its stage goes back
// to thread 0 for the chunk kPipe ahead once every thread has its accesses.
__device__ __forceinline__ void load_first(const elem_t *row, int c, const place_t &p, int n, raw_t (&r)[kNv])
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
  if (c < kCacheChunks) cache_put(c, p.t, r);
}

// Runs body(place) for each row this CTA owns; body reads each chunk of the
// row exactly once through load_first, in order (the stream's contract).
template <typename F>
__device__ __forceinline__ void for_row_blocks(const kite_row_args &a, F body)
{
  if ((int64_t)blockIdx.x >= a.M) return;
  if (threadIdx.x == 0) stream_next = { (int64_t)blockIdx.x, 0, 0 };   // thread 0's alone
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
