# Part "lint": checks of the tree itself, no build needed (python3 only).
#   behaviour IDs   every cited ID has a row in docs/behaviours.md; every test named there exists
#   citations       comments cite only files of the repository
#   fault names     every fault point the code hits is in the table of faults.c
#   layers          includes under libsandbox0/ point only downward (docs/architecture.md)
#   security        every test docs/security.md names exists; threats without one are listed gaps
# One check = one count.

deps() {
  s0_apt_install python3
}

run() {
  local p=0 f=0 c
  for c in check_behaviour_ids check_citations check_fault_names check_layers check_security; do
    echo "--> scripts/$c.py"
    if python3 "scripts/$c.py"; then p=$((p+1)); else f=$((f+1)); fi
  done
  s0_tally lint "$p" "$f" 0
  [ "$f" = 0 ]
}
