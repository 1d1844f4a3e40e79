# Sourced by the test bed's build scripts (build.sh, node.sh, test/images/build.sh). A build from
# nothing takes a while, so each of its phases says where it is before it starts:
#
#   testbed-build: [k/N] WHAT (about DURATION on 2 cores)
#
# TESTBED_BUILD_STEPS names the phases of a build from nothing, in order (make testbed-build sets
# it); a script run on its own counts its own phases. A phase with nothing to do says nothing.
# TESTBED_BUILD_PLAN=1: every phase that would run says so, and nothing is built. Phases that run
# side by side say so in order first (under TESTBED_BUILD_PLAN=1), then run with their names in
# TESTBED_BUILD_SAID, which keeps them from saying it again.

# step NAME WHAT DURATION: the line above for phase NAME; returns 1 under TESTBED_BUILD_PLAN=1.
step() {
  local i=0 k=0 s
  for s in $TESTBED_BUILD_STEPS; do
    i=$((i + 1))
    [ "$s" = "$1" ] && k=$i
  done
  if [[ " ${TESTBED_BUILD_SAID:-} " == *" $1 "* ]]; then
    :
  elif [ "$k" -gt 0 ]; then
    echo "testbed-build: [$k/$i] $2 (about $3 on 2 cores)" >&2
  else
    echo "testbed-build: $2 (about $3 on 2 cores)" >&2
  fi
  [ "${TESTBED_BUILD_PLAN:-}" != 1 ]
}
