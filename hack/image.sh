#!/usr/bin/env bash
# Builds Lahar's OCI image with buildah (Debian package; vfs storage, chroot isolation: no
# daemon, no privileges beyond root in this machine), FROM scratch, from deploy/image/Containerfile:
# lahar-scheduler and lahar-sim from a release build, the shared libraries they load (as ldd
# lists them), CA certificates, a non-root user (65532), the bundled examples under
# /usr/share/lahar/examples. Tagged with the version `--version` prints (git describe) and
# written as an OCI archive: out/lahar-<version>.oci.tar.
#
# Usage: hack/image.sh [--rootfs-only] [--smoke]
#   --rootfs-only  lay out out/image/rootfs only (for `docker build`, see the Containerfile)
#   --smoke        then run, inside the image (buildah run, chroot): lahar-scheduler --version,
#                  lahar-sim --version and lahar-sim run on a bundled example; fail unless each
#                  works and no shell is in the image
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
ROOTFS_ONLY=0 SMOKE=0
for a in "$@"; do
  case "$a" in
    --rootfs-only) ROOTFS_ONLY=1 ;;
    --smoke) SMOKE=1 ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "image: unknown argument: $a (see --help)" >&2; exit 2 ;;
  esac
done
say() { echo "image: $*" >&2; }
die() { say "error: $*"; exit 1; }

NINJA_TARGETS="lahar-scheduler lahar-sim" hack/build.sh build-release -DCMAKE_BUILD_TYPE=Release -DLAHAR_TESTS=OFF >&2
BIN=build-release/bin
VERSION="$("$BIN/lahar-scheduler" --version | awk '{print $2}')"
[ -n "$VERSION" ] || die "lahar-scheduler --version printed no version"

# --- the root filesystem ----------------------------------------------------------------------
OUT="$ROOT/out/image"
FS="$OUT/rootfs"
rm -rf "$FS"
mkdir -p "$FS/usr/local/bin" "$FS/etc/ssl/certs" "$FS/tmp" "$FS/home/nonroot" "$FS/usr/share/lahar"
chmod 1777 "$FS/tmp"
for b in lahar-scheduler lahar-sim; do
  strip -o "$FS/usr/local/bin/$b" "$BIN/$b"
done
# Every library the binaries load, at the path the loader finds it, and the loader itself.
for lib in $(ldd "$BIN/lahar-scheduler" "$BIN/lahar-sim" | awk '/=> \// {print $3} /^\t\/.*ld-linux/ {print $1}' | sort -u); do
  mkdir -p "$FS$(dirname "$lib")"
  cp -L "$lib" "$FS$lib"
done
[ -f /etc/ssl/certs/ca-certificates.crt ] || die "/etc/ssl/certs/ca-certificates.crt missing (apt-get install ca-certificates)"
cp /etc/ssl/certs/ca-certificates.crt "$FS/etc/ssl/certs/"
printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$FS/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$FS/etc/group"
chown 65532:65532 "$FS/home/nonroot" 2>/dev/null || say "warning: not root, /home/nonroot stays owned by $(id -un)"
cp -R config/examples "$FS/usr/share/lahar/examples"
cp LICENSE "$FS/usr/share/lahar/LICENSE"
say "root filesystem in $FS ($(du -sh "$FS" | cut -f1), version $VERSION)"
[ "$ROOTFS_ONLY" = 1 ] && exit 0

# --- the image --------------------------------------------------------------------------------
command -v buildah >/dev/null || die "buildah is not installed (apt-get install buildah)"
BUILDAH=(buildah --storage-driver vfs)
IMAGE="localhost/lahar:$VERSION"
ARCHIVE="$ROOT/out/lahar-$VERSION.oci.tar"
"${BUILDAH[@]}" build --quiet --isolation chroot --layers=false -f deploy/image/Containerfile \
  --build-arg "VERSION=$VERSION" -t "$IMAGE" "$OUT" >&2
rm -f "$ARCHIVE"
"${BUILDAH[@]}" push --quiet "$IMAGE" "oci-archive:$ARCHIVE:$IMAGE" >&2
# The archive is the product: the copy in buildah's storage would only pile up build after build.
"${BUILDAH[@]}" rmi "$IMAGE" >/dev/null
say "wrote $ARCHIVE ($(du -h "$ARCHIVE" | cut -f1)), tagged $IMAGE"

if [ "$SMOKE" = 1 ]; then
  ctr="$("${BUILDAH[@]}" from --quiet "oci-archive:$ARCHIVE")"
  trap '"${BUILDAH[@]}" rm "$ctr" >/dev/null 2>&1 || true' EXIT
  run() { "${BUILDAH[@]}" run --isolation chroot "$ctr" -- "$@"; }
  got="$(run /usr/local/bin/lahar-scheduler --version)"
  [ "$got" = "lahar-scheduler $VERSION" ] || die "lahar-scheduler --version in the image printed '$got', not 'lahar-scheduler $VERSION'"
  say "ok: $got"
  got="$(run /usr/local/bin/lahar-sim --version)"
  [ "$got" = "lahar-sim $VERSION" ] || die "lahar-sim --version in the image printed '$got'"
  say "ok: $got"
  report="$(run /usr/local/bin/lahar-sim run /usr/share/lahar/examples/departments-quotas.yaml 2>&1)" ||
    die "lahar-sim run in the image failed: $report"
  grep -q "jobs completed" <<<"$report" || die "lahar-sim run in the image printed no summary: $report"
  say "ok: lahar-sim run on a bundled example: $(grep 'jobs completed' <<<"$report" | tr -s ' ')"
  user="$("${BUILDAH[@]}" inspect --format '{{.OCIv1.Config.User}}' "$ctr")"
  [ "$user" = "65532:65532" ] || die "the image runs as '$user', not 65532:65532"
  say "ok: runs as user $user"
  if run /bin/sh -c true >/dev/null 2>&1; then die "the image has a shell (/bin/sh)"; fi
  say "ok: no shell in the image"
fi
echo "$ARCHIVE"
