# tests/models/row_bulk.py - a model of the row-op "bulk" driver
# (templates/lib/rowops.lua BULK_ROWS: pipeline_rows, stage_issue,
# stage_refill), with and without Hold, under random interleavings of the
# CTA's threads and the bulk copies' landings.  Checks that every read finds
# its stage holding the row block it expects (the barrier phase it waits for
# is that block's), that no copy lands in a stage a thread has still to read
# (Hold: twice, in finish), and that nothing deadlocks or is left in flight.
# A model of the protocol, not of the code: keep them in step.
# Run: python3 tests/models/row_bulk.py
import random


class Sync:   # __syncthreads over `count` threads
    def __init__(s, count): s.count = count; s.arrived = 0; s.gen = 0

    def arrive(s):
        s.arrived += 1
        if s.arrived == s.count: s.arrived = 0; s.gen += 1
        return s.gen


def thread(tid, blocks, pipe, hold, reads):
    """A thread's steps: ('wait', s, parity), ('read', s, b), ('sync',), ('issue', s, b)."""
    if tid == 0:   # the prologue: the first kPipe blocks issued
        for s in range(min(pipe, len(blocks))): yield ('issue', s, blocks[s])
    s, parity = 0, 0
    for i, b in enumerate(blocks):
        yield ('wait', s, parity)
        refill = [('sync',)] + ([('issue', s, blocks[i + pipe])] if tid == 0 and i + pipe < len(blocks) else [])
        if not hold:
            yield ('read', s, b)            # load(place)
            yield from refill               # stage_refill before finish
        for r in range(reads if hold else 0):
            if r: yield ('sync',)           # finish's reduction between its two loads
            yield ('read', s, b)
        yield ('sync',)                     # finish's reduction (non-Hold), or the one after the loads
        if hold: yield from refill          # stage_refill once finish is done
        s += 1
        if s == pipe: s, parity = 0, parity ^ 1


def run(nblocks, pipe, threads, hold, seed):
    rnd = random.Random(seed)
    reads = 2 if hold else 1
    blocks = list(range(nblocks))
    phases = [0] * pipe                     # completed phases of each stage's barrier
    content = [None] * pipe                 # the block a stage holds
    left = [0] * pipe                       # reads of that block still to come
    flight = []                             # (stage, block) copies issued, not landed
    sync = Sync(threads)
    progs = [thread(t, blocks, pipe, hold, reads) for t in range(threads)]
    cur = [next(p, None) for p in progs]
    waiting = [None] * threads              # the Sync generation a thread waits past
    while True:
        def runnable(t):
            a = cur[t]
            if a is None: return False
            if a[0] == 'wait': return phases[a[1]] % 2 != a[2]
            if a[0] == 'sync': return waiting[t] is None or sync.gen >= waiting[t]
            return True
        ready = [t for t in range(threads) if runnable(t)]
        if not ready and not flight:
            assert all(c is None for c in cur), ("deadlock", cur)
            break
        if flight and (not ready or rnd.random() < 0.3):   # a copy lands
            s, b = flight.pop(rnd.randrange(len(flight)))
            assert left[s] == 0, ("a copy landed in a stage still being read", s, content[s], b)
            content[s], left[s] = b, reads * threads
            phases[s] += 1
            continue
        t = rnd.choice(ready)
        a = cur[t]
        if a[0] == 'sync':
            if waiting[t] is None:   # arrive; pass once every thread has
                waiting[t] = sync.gen + 1
                sync.arrive()
                continue
            waiting[t] = None
        elif a[0] == 'read':
            assert content[a[1]] == a[2], ("wrong block", a, content[a[1]])
            left[a[1]] -= 1
        elif a[0] == 'issue':
            flight.append((a[1], a[2]))
        cur[t] = next(progs[t], None)
    assert not flight and all(x == 0 for x in left), "a copy or a read left over"


n = 0
rnd = random.Random(1)
for _ in range(4000):
    nb, pipe, th, hold = rnd.randint(1, 12), rnd.choice([2, 3, 4]), rnd.randint(1, 4), rnd.random() < 0.5
    run(nb, pipe, th, hold, rnd.random())
    n += 1
print(f"row_bulk: {n} runs, with and without Hold: no wrong block, no copy over a stage being read, no deadlock")
