# Sourced by the build scripts (test/testbed/build.sh, test/krew/build.sh): cache_lock FILE WHO
# holds an exclusive lock on FILE until the script exits, so that two builds into one cache never
# write the same file at once; the second waits and then finds what the first built. flock(1)
# where there is one (util-linux); elsewhere (macOS) a lock directory holding the owner's PID, taken
# over when that process is gone. The caller's EXIT trap calls cache_unlock.
cache_lock_dir=
cache_unlock() { if [ -n "$cache_lock_dir" ]; then rm -rf "$cache_lock_dir"; fi; }
cache_lock() {
  local file=$1 who=$2
  mkdir -p "$(dirname "$file")"
  if command -v flock >/dev/null 2>&1; then
    exec 9>"$file"
    flock -n 9 && return
    echo "$who: another build holds $file; waiting for it" >&2
    flock 9
    return
  fi
  local said=
  until mkdir "$file.d" 2>/dev/null; do
    local owner
    owner=$(cat "$file.d/pid" 2>/dev/null || true)
    if [ -n "$owner" ] && ! kill -0 "$owner" 2>/dev/null; then
      rm -rf "$file.d"
      continue
    fi
    [ -n "$said" ] || { echo "$who: another build holds $file; waiting for it" >&2; said=1; }
    sleep 2
  done
  echo $$ >"$file.d/pid"
  cache_lock_dir=$file.d
}
