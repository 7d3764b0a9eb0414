#!/usr/bin/env bash
# Proves the README's two commands on a bare Debian 12: builds a minimal
# bookworm root file system (debootstrap --variant=minbase) in a temporary
# folder, copies in the repository's tracked and untracked-but-not-ignored files
# and ../shared, and runs `scripts/demo.sh` then `scripts/test.sh` there under
# chroot with a cleared environment. Nothing is cached between runs: the root is
# made anew and removed at the end, so a package that scripts/setup.sh forgets
# makes this fail.
#
# Needs root (debootstrap, mount, chroot). The package mirror is read at run
# time from the host's own apt configuration (`apt-cache policy`); no host name
# is written here. Usage: .ci/clean_root.sh [WORKDIR]   (default: a mktemp -d)
set -euo pipefail
arg_work=${1:-}
repo=$(cd "$(dirname "$0")/.." && pwd)
shared=$(cd "$repo/../shared" 2>/dev/null && pwd || true)
[ "$(id -u)" = 0 ] || { echo "clean_root: must run as root (debootstrap, mount, chroot)" >&2; exit 1; }
[ -n "$shared" ] || { echo "clean_root: ../shared not found next to the repository" >&2; exit 1; }

t0=$(date +%s)
stamp() { echo "clean_root: [$(( $(date +%s) - t0 )) s] $*"; }

if ! command -v debootstrap >/dev/null; then
  stamp "installing debootstrap on the host"
  apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap >/dev/null
fi

# Mirrors as the host's apt configuration names them (read from the source
# files, so it works before any `apt-get update`): "SITE SUITE".
mapfile -t sources < <(apt-get indextargets --no-release-info --format '$(SITE) $(RELEASE) $(COMPONENT)' |
                       awk '$3 == "main" && $2 ~ /^(bookworm|stable)(-updates|-security)?$/ \
                            { sub(/^stable/, "bookworm", $2); print $1, $2 }' | sort -u)
mirror=""
for s in "${sources[@]}"; do
  read -r uri suite <<<"$s"
  if [ "$suite" = bookworm ]; then mirror=$uri; fi
done
[ -n "$mirror" ] || { echo "clean_root: the host's apt sources have no bookworm/main mirror" >&2; exit 1; }

if [ -n "$arg_work" ]; then
  case $arg_work in /*) work=$arg_work ;; *) work=$PWD/$arg_work ;; esac
  [ ! -e "$work" ] || { echo "clean_root: $work exists; give a new folder (it is removed at the end)" >&2; exit 1; }
  case $work/ in "$repo"/*) echo "clean_root: $work is inside the repository; give a folder outside it" >&2; exit 1 ;; esac
  mkdir -p "$work"
else
  work=$(mktemp -d /var/tmp/gec-clean-root.XXXXXX)
fi
root="$work/root"
mkdir -p "$root"
mounted=()
cleanup() {
  local status=$?
  set +e  # every step runs, whatever the one before it did
  # Processes still running inside the root (a build interrupted by a signal).
  for p in /proc/[0-9]*; do
    case $(readlink "$p/root" 2>/dev/null) in "$root"*) kill -9 "${p#/proc/}" 2>/dev/null || true ;; esac
  done
  # Every mount under the root (ours, and any debootstrap left), deepest first.
  findmnt -rn -o TARGET | grep -F "$root/" | sort -r | while read -r m; do umount -l "$m" 2>/dev/null; done
  if findmnt -rn -o TARGET | grep -qF "$root/"; then
    echo "clean_root: something is still mounted under $root; left in place" >&2
    return
  fi
  if [ "$status" != 0 ] && [ -d "$work" ]; then  # keep the logs of a failed run
    mkdir -p "$work.logs" && cp "$work"/*.log "$work.logs/" 2>/dev/null && echo "clean_root: logs kept in $work.logs" >&2
  fi
  rm -rf --one-file-system "$work"
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

stamp "debootstrap --variant=minbase bookworm from $mirror"
# ca-certificates: an https mirror must work inside the root too.
if ! debootstrap --variant=minbase --include=ca-certificates bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1; then
  tail -20 "$work/debootstrap.log" >&2
  echo "clean_root: debootstrap failed" >&2
  exit 1
fi

# apt inside the root: the same mirrors as the host. dpkg without fsync, and no
# documentation or man pages: a throwaway root, and nothing the project uses.
: >"$root/etc/apt/sources.list"
for s in "${sources[@]}"; do
  read -r uri suite <<<"$s"
  echo "deb $uri $suite main" >>"$root/etc/apt/sources.list"
done
echo force-unsafe-io >"$root/etc/dpkg/dpkg.cfg.d/gec-unsafe-io"
printf 'path-exclude=/usr/share/doc/*\npath-exclude=/usr/share/man/*\npath-exclude=/usr/share/locale/*\n' \
  >"$root/etc/dpkg/dpkg.cfg.d/gec-nodoc"
cp /etc/resolv.conf "$root/etc/resolv.conf"

# The repository as a fresh clone would have it, and ../shared beside it.
mkdir -p "$root/work/main" "$root/work/shared"
if ! (cd "$repo" && git -c safe.directory="$repo" ls-files -z --cached --others --exclude-standard |
        tar --null --ignore-failed-read -T - -cf -) | tar -C "$root/work/main" -xf -; then
  echo "clean_root: copying the repository into the root failed" >&2
  exit 1
fi
cp -a "$shared/." "$root/work/shared/"

for m in proc sys dev; do
  mkdir -p "$root/$m"
  case $m in
    proc) mount -t proc proc "$root/proc" ;;
    sys)  mount -t sysfs sysfs "$root/sys" ;;
    dev)  mount --bind /dev "$root/dev" ;;
  esac
  mounted+=("$root/$m")
done

# In the background and waited for, so that a signal to this script is
# handled at once (bash runs traps only between foreground commands).
in_root() {
  chroot "$root" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/root LANG=C.UTF-8 CI=true /bin/bash -c "$1" &
  wait $!
}
stamp "root ready; running the README's first command (scripts/demo.sh)"
if ! in_root "cd /work/main && scripts/demo.sh" >"$work/demo.log" 2>&1; then
  tail -80 "$work/demo.log"; echo "clean_root: scripts/demo.sh failed in the clean root" >&2; exit 1
fi
tail -15 "$work/demo.log"
stamp "running the README's second command (scripts/test.sh)"
if ! in_root "cd /work/main && scripts/test.sh" >"$work/test.log" 2>&1; then
  tail -80 "$work/test.log"; echo "clean_root: scripts/test.sh failed in the clean root" >&2; exit 1
fi
tail -15 "$work/test.log"
stamp "both README commands passed on a clean Debian 12 root"
