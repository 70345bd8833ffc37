# Session 34, call 3, any GPU: the y fold (branch s34-yfold-ab, f636f9ce: 16-bit layernorm's y as
# x * rs - mean * rs, one operation an element less; not in 64-register cluster rows) tested by name
# (every bf16 and f16 layernorm variant, 16 processes at once, S34_BYNAME_S), then A/B against the
# carried kite-bench of 8d673ffe (main, .abbranch/oldbench.tar.xz): every bf16 layernorm variant at
# the N, three rounds alternating (s31_call5.sh's A/B).  S34_END (default 470 s) bounds it.
S31_BYNAME='layernorm_bf16_* layernorm_f16_*' S31_BYNAME_S=${S34_BYNAME_S:-170} S31_AB_ONLY='*' \
  S31_AB_N=1024,4096,16384,65536,131072,262144 S31_END=${S34_END:-470} exec bash bench/lab/s31_call5.sh
