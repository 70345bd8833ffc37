# tests/models/row_stream.py - a model of the row-op "stream" driver
# (templates/lib/rowops.lua STREAM_ROWS): thread 0's cursor (stream_issue)
# against the CTA's reads (load_first), for random M, N, chunk, stages and
# grid.  Checks that every read finds its stage armed with the chunk it
# expects, in the barrier phase it waits for, and that nothing armed is left
# unread.  A model of the protocol, not of the code: keep them in step.
# Run: python3 tests/models/row_stream.py
import random
def run(M, N, chunk, pipe, grid, cta):
    # issue side (thread 0), cursor as in stream_issue
    nxt={'row':cta,'c':0,'stage':0}
    stages=[None]*pipe   # item armed in stage (None = not armed), completions assumed eventually
    P=[0]*pipe           # completed phases per stage barrier
    def issue():
        if nxt['row']>=M: return
        s=nxt['stage']; assert stages[s] is None, "stage re-armed before read"
        stages[s]=(nxt['row'],nxt['c']); 
        nxt['stage']=(s+1)%pipe
        nxt['c']+=1
        if nxt['c']*chunk>=N: nxt['c']=0; nxt['row']+=grid
    for _ in range(pipe): issue()
    k=0
    for b in range(cta, M, grid):
        m=N
        c=0
        while c*chunk<m:
            s=k%pipe; parity=(k//pipe)&1
            assert stages[s]==(b,c), ("wrong item", stages[s], (b,c))
            assert P[s]%2==parity, "phase mismatch"
            P[s]+=1; stages[s]=None   # consumed (phase completed when armed; wait passes)
            issue()
            k+=1; c+=1
    assert all(x is None for x in stages), "armed stage never read (would be left in flight)"
rnd=random.Random(1); n=0
for _ in range(3000):
    M=rnd.randint(1,50); N=rnd.randint(1,200); chunk=rnd.choice([8,16,64]); pipe=rnd.choice([2,4]); grid=rnd.randint(1,8)
    for cta in range(min(grid,M)): run(M,N,chunk,pipe,grid,cta); n+=1
print("ok",n)
