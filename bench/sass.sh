# SASS checks on kernel objects, sourced by bench/device_run.sh and the lab
# scripts (bench/lab/lab_steps.sh); needs cuobjdump (the GPU machine has it).

# Of the objects named on stdin, those whose SASS uses local memory (LDL/STL).
# ($1: dumps at a time, 4 unless given)
with_ldl() { xargs -P "${1:-4}" -I{} sh -c 'cuobjdump --dump-sass "{}" 2>/dev/null | grep -qE "[[:space:]](LDL|STL)[. ]" && echo "{}"'; }

# Of the objects named on stdin ($1 says what they are), how many use local
# memory, the first few named; $2 dumps at a time.
ldl_report() {
  local objs; objs=$(cat)
  with_ldl "$2" <<<"$objs" >/tmp/ldl.txt
  echo "$1 with LDL/STL in SASS: $(wc -l </tmp/ldl.txt) of $(grep -c . <<<"$objs")"
  head -5 /tmp/ldl.txt
}
