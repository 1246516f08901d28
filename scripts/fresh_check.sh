#!/usr/bin/env bash
# Runs README's two Quick start commands in a fresh Debian 12 root, as a new user would:
# debootstrap --variant=minbase bookworm from this machine's configured Debian mirror, a clean
# clone of the committed HEAD (plus ../shared, as CI has it), then, inside the chroot as root,
# `bash scripts/quickstart.sh` and `bash scripts/test.sh`, each timed. Only the CUDA toolkit
# comes from the host (it is not an apt package): /usr/local/cuda is bind-mounted read-only
# when present. Everything else the build needs must come from scripts/install_deps.sh.
#
# usage: sudo bash scripts/fresh_check.sh [--root DIR] [--keep] [--ccache DIR]
#   --root DIR    where the fresh root goes (default /var/tmp/servesim-fresh; wiped first)
#   --keep        leave the root in place afterwards (default: removed)
#   --ccache DIR  share this ccache directory with the chroot (default: none, a cold build)
# Logs and timings: DIR.log/ (quickstart.log, test.log, timings.txt). Exit status: the first
# failing step's.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
root=/var/tmp/servesim-fresh
keep=0
ccache_dir=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --root) root="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    --ccache) ccache_dir="$2"; shift 2 ;;
    *) echo "fresh_check: unknown option $1 (see the usage at the top of this script)" >&2; exit 2 ;;
  esac
done
[[ $(id -u) -eq 0 ]] || { echo "fresh_check: must run as root (debootstrap, chroot, mount)" >&2; exit 2; }
logs="$root.log"
rm -rf "$logs"
mkdir -p "$logs"

# The first Debian mirror apt is configured with (deb822 .sources or one-line sources.list).
mirror=$(awk '/^URIs:/ && $2 ~ /debian\/?$/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
if [[ -z "$mirror" ]]; then
  mirror=$(awk '$1 == "deb" && $3 ~ /^bookworm$/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
fi
[[ -n "$mirror" ]] || { echo "fresh_check: no Debian mirror found in /etc/apt" >&2; exit 2; }
command -v debootstrap >/dev/null || { apt-get update -qq && apt-get install -y -qq debootstrap; }

mounts=()
cleanup() {
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[i]}" 2>/dev/null || true; done
  if [[ $keep -eq 0 ]]; then rm -rf "$root"; fi
}
trap cleanup EXIT
bind() {  # bind SRC DST [ro]
  mkdir -p "$2"
  mount --bind "$1" "$2"
  mounts+=("$2")
  if [[ "${3:-}" == ro ]]; then mount -o remount,bind,ro "$2"; fi
}
timed() {  # timed NAME COMMAND...: runs it, appends "NAME: N s (exit E)" to timings.txt
  local name=$1 start end rc
  shift
  start=$(date +%s)
  set +e
  "$@"
  rc=$?
  set -e
  end=$(date +%s)
  echo "$name: $((end - start)) s (exit $rc)" | tee -a "$logs/timings.txt"
  return $rc
}

rm -rf "$root"
echo "fresh_check: debootstrap --variant=minbase bookworm $root $mirror"
timed debootstrap debootstrap --variant=minbase bookworm "$root" "$mirror" >"$logs/debootstrap.log" 2>&1
# The same apt sources as this machine (its Debian mirror and security), nothing else.
rm -f "$root/etc/apt/sources.list"
for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list; do
  [[ -f "$f" ]] && grep -qi debian "$f" && cp "$f" "$root/etc/apt/$(basename "$f" | sed 's/^sources.list$/sources.list/')" 2>/dev/null
done
mkdir -p "$root/etc/apt/sources.list.d"
for f in /etc/apt/sources.list.d/*.sources; do
  [[ -f "$f" ]] && grep -q "debian" "$f" && cp "$f" "$root/etc/apt/sources.list.d/"
done
cp /etc/resolv.conf "$root/etc/resolv.conf"

bind /proc "$root/proc"
bind /sys "$root/sys"
bind /dev "$root/dev"
bind /dev/pts "$root/dev/pts"
if [[ -d /usr/local/cuda ]]; then
  cuda=$(readlink -f /usr/local/cuda)
  bind "$cuda" "$root$cuda" ro
  ln -sfn "$cuda" "$root/usr/local/cuda"
fi
if [[ -n "$ccache_dir" ]]; then
  bind "$ccache_dir" "$root/root/.cache/ccache"
fi

# A clean clone of what is committed, at the path CI's clones have beside shared/.
mkdir -p "$root/work"
git clone -q --no-hardlinks "$repo" "$root/work/main"
if [[ -d "$repo/../shared" ]]; then cp -a "$repo/../shared" "$root/work/shared"; fi
echo "fresh_check: clone of $(git -C "$repo" rev-parse --short HEAD) in $root/work/main"

in_root() {  # a login-like root shell in the clone, with nothing of this machine's environment
  chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 bash -c "cd /work/main && $1"
}
# The user's own first step: git, to have cloned the repository.
timed git_install in_root "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq git >/dev/null" \
  >"$logs/git.log" 2>&1
timed quickstart in_root "bash scripts/quickstart.sh" >"$logs/quickstart.log" 2>&1
timed test in_root "bash scripts/test.sh" >"$logs/test.log" 2>&1
grep -E "servesim: CUDA|tests passed|tests failed" "$logs/quickstart.log" "$logs/test.log" || true
echo "fresh_check: passed; logs in $logs"
