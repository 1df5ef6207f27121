# For examples/get-versions.sh: reads a Debian Packages index and prints
# "filename sha256 package version" for each package named in ROOTS
# (space-separated) and every library it depends on, recursively: the
# first alternative of each dependency, versions not compared (unstable's
# index has one version of each package).
BEGIN { RS = ""; FS = "\n" }
{
  name = ""; deps = ""; file = ""; sha = ""; ver = ""; prov = ""
  for (i = 1; i <= NF; i++) {
    if ($i ~ /^Package: /) name = substr($i, 10)
    else if ($i ~ /^Version: /) ver = substr($i, 10)
    else if ($i ~ /^Depends: / || $i ~ /^Pre-Depends: /) deps = deps ", " substr($i, index($i, ":") + 2)
    else if ($i ~ /^Filename: /) file = substr($i, 11)
    else if ($i ~ /^SHA256: /) sha = substr($i, 9)
    else if ($i ~ /^Provides: /) prov = substr($i, 11)
  }
  if (name in F) next
  F[name] = file; S[name] = sha; V[name] = ver; D[name] = deps
  n = split(prov, ps, /, */)
  for (j = 1; j <= n; j++) { p = ps[j]; sub(/ .*/, "", p); if (!(p in P)) P[p] = name }
}
END {
  n = split(ROOTS, todo, " ")
  while (n > 0) {
    pkg = todo[n--]
    if (pkg in seen) continue
    if (!(pkg in F) && (pkg in P)) pkg = P[pkg]
    if (!(pkg in F)) { print "missing " pkg > "/dev/stderr"; bad = 1; continue }
    seen[pkg] = 1
    print F[pkg], S[pkg], pkg, V[pkg]
    m = split(D[pkg], ds, /, */)
    for (k = 1; k <= m; k++) {
      d = ds[k]; sub(/ *\|.*/, "", d); sub(/ *\(.*/, "", d); sub(/:any$/, "", d)
      # Libraries only: the server needs their .so files, not perl or debconf.
      if (d ~ /^lib/ || d ~ /^zlib1g/ || d ~ /^gcc-[0-9]+-base$/) todo[++n] = d
    }
  }
  exit bad
}
