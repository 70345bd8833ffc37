# tests/models/gemm_pipeline.py - a model of gemm_tma's mbarrier protocol
# (templates/lib/gemm_tma.lua: produce, consume, release, the producer's tail),
# run under random interleavings of the producer thread, the consumer warps
# and TMA completions, for single CTAs and 2-CTA clusters with multicast, and
# for the ping-pong schedule (two consumers taking whole tiles in turn
# through named barriers).
# It checks what the GPU cannot show cheaply: no deadlock, no TMA write into
# a stage a consumer still reads, no remote arrival or multicast into a CTA
# that has exited.  It models the protocol, not the code: keep the two in
# step when either changes.  Run: python3 tests/models/gemm_pipeline.py
import random, itertools

class Bar:
    def __init__(s, count): s.count=count; s.pending=count; s.tx=0; s.P=0
    def _chk(s):
        if s.pending==0 and s.tx==0: s.P+=1; s.pending=s.count
    def arrive(s): 
        assert s.pending>0; s.pending-=1; s._chk()
    def expect(s,b): s.tx+=b
    def complete(s,b): s.tx-=b; s._chk()
    def ready(s,q): return (s.P%2)!=q

class Named:   # bar.sync / bar.arrive over `count` warps
    def __init__(s, count): s.count=count; s.arrived=0; s.gen=0
    def arrive(s):
        s.arrived+=1
        if s.arrived==s.count: s.arrived=0; s.gen+=1

def run(units, k_tiles, stages, cons, cluster, seed, pp=False, turns=True):
    rnd=random.Random(seed)
    turn=[Named(8), Named(8)]   # turn[w]: consumer warpgroup w may start its next k-loop
    C=cluster; STAGE=2  # stage bytes: A part (1) + B part (1); shared operand split in halves 0.5 each
    full=[[Bar(1) for _ in range(stages)] for _ in range(C)]
    empty=[[Bar(C*(1 if pp else cons)*4) for _ in range(stages)] for _ in range(C)]
    content=[[dict() for _ in range(stages)] for _ in range(C)]   # stage -> {part: item}
    reading=[[set() for _ in range(stages)] for _ in range(C)]    # warps reading stage
    exited=[False]*C
    inflight=[]  # (dst cta, stage, part, item, bytes)
    grid_clusters=max(1,min(units,3))
    # per cta: the units it walks (cluster index 0 only: model one cluster)
    my_units=list(range(0,units,grid_clusters))
    def producer(c):
        s=0; ph=1
        for u in my_units:
            for kt in range(k_tiles):
                while not empty[c][s].ready(ph): yield
                full[c][s].expect(STAGE); full[c][s].arrive()
                item=(u,kt)
                # A: own whole (part 'A'); B: if cluster, half c multicast to all
                inflight.append((c,s,'A',item,1))
                if C==1: inflight.append((c,s,'B',item,1))
                else:
                    for d in range(C): inflight.append((d,s,'B%d'%c,item,0.5))
                s+=1
                if s==stages: s=0; ph^=1
        if C>1:
            for i in range(stages):
                while not empty[c][s].ready(ph): yield
                s+=1
                if s==stages: s=0; ph^=1
    def consumer(c,w):
        s=0; ph=0; wg=w//4
        for i,u in enumerate(my_units):
            if pp and i%2!=wg:   # the other consumer's tile: skip its stages
                ph^=((s+k_tiles)//stages)&1; s=(s+k_tiles)%stages
                continue
            if pp and turns and i>0:
                g=turn[wg].gen; turn[wg].arrive()
                while turn[wg].gen==g: yield
            prev=None
            for kt in range(k_tiles):
                while not full[c][s].ready(ph): yield
                # check content
                item=(u,kt)
                parts=['A','B'] if C==1 else ['A']+['B%d'%d for d in range(C)]
                for pt in parts: assert content[c][s].get(pt)==item,(c,s,pt,content[c][s],item)
                reading[c][s].add(w)
                yield
                if prev is not None:
                    # wait<1>: previous group done
                    reading[c][prev].discard(w)
                    empty[c][prev].arrive()
                    if C>1:
                        assert not exited[c^1], "remote arrive on exited CTA"
                        empty[c^1][prev].arrive()
                prev=s
                s+=1
                if s==stages: s=0; ph^=1
            if pp and turns and i+1<len(my_units): turn[wg^1].arrive()
            yield
            reading[c][prev].discard(w)
            empty[c][prev].arrive()
            if C>1:
                assert not exited[c^1], "remote arrive on exited CTA"
                empty[c^1][prev].arrive()
            for _ in range(rnd.randint(0,3)): yield   # epilogue
    threads={}
    for c in range(C):
        threads[(c,'p')]=producer(c)
        for w in range(cons*4): threads[(c,w)]=consumer(c,w)
    alive=dict(threads); steps=0
    while alive or inflight:
        steps+=1; assert steps<10**6, "deadlock"
        choices=list(alive.keys())+(['tma'] if inflight else [])
        k=rnd.choice(choices)
        if k=='tma':
            i=rnd.randrange(len(inflight)); d,s,pt,item,b=inflight.pop(i)
            assert not exited[d], "TMA into exited CTA"
            assert not reading[d][s], ("overwrite while reading",d,s,pt,item,reading[d][s])
            content[d][s][pt]=item
            full[d][s].complete(b)
            continue
        try: next(alive[k])
        except StopIteration:
            del alive[k]
            for c in range(C):
                if not any(kk[0]==c for kk in alive): exited[c]=True
    return steps

n=0
for seed in range(300):
    for units,k_tiles,stages,cons,cluster in [(1,1,2,1,1),(3,5,4,2,1),(7,3,4,2,2),(2,1,5,1,2),(5,9,3,2,2),(1,2,4,2,2)]:
        run(units,k_tiles,stages,cons,cluster,seed); n+=1
    for units,k_tiles,stages in [(6,1,2),(5,7,3),(8,2,5),(3,9,4),(9,4,4)]:
        run(units,k_tiles,stages,2,1,seed,pp=True); n+=1
print("ok", n, "runs")
