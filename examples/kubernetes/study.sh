#!/bin/bash
# Runs a relbench study on a Kubernetes cluster with study-job.yaml beside
# this file: the shards as an Indexed Job, then the merge.
#
#   examples/kubernetes/study.sh PLAN.toml STUDY_ID [SHARDS]
#
# STUDY_ID names the study's objects (relbench-STUDY_ID-study, -merge,
# -results, -plan), so a second study does not collide with the first.
# The plan's whole directory is carried in a ConfigMap (its `config` files
# with it; keep it under 1 MiB, as ConfigMaps are). The shards' wait ends
# when the Job is complete or failed; the merge runs either way, and says
# which shard is missing and why. `relbench check PLAN --shards N
# --schedule` shows what each shard runs and how long, before submitting.
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 PLAN.toml STUDY_ID [SHARDS]" >&2
  exit 2
fi
plan=$1 study=$2 shards=${3:-3}
if ! [[ $study =~ ^[a-z0-9]([-a-z0-9]{0,30}[a-z0-9])?$ ]]; then
  echo "STUDY_ID $study: use lowercase letters, digits and '-' (it names Kubernetes objects)" >&2
  exit 2
fi
if ! [[ $shards =~ ^[1-9][0-9]*$ ]]; then
  echo "SHARDS $shards: a whole number of shards, 1 or more" >&2
  exit 2
fi
[ -f "$plan" ] || { echo "no plan at $plan" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
dir=$(cd "$(dirname "$plan")" && pwd)
manifest() {
  sed -e "s/relbench-example-/relbench-$study-/g" \
    -e "s/^\(.*\)[0-9][0-9]*\(\"\{0,1\}\) # shards$/\1$shards\2 # shards/" \
    -e "s|value: plan.toml$|value: $(basename "$plan")|" \
    "$here/study-job.yaml"
}
archive=$(mktemp)
trap 'rm -f "$archive"' EXIT
tar -C "$dir" -czf "$archive" .
kubectl create configmap "relbench-$study-plan" --from-file=plan.tgz="$archive"
manifest | kubectl apply -l relbench.dev/part=shards -f -
# Until the Job is complete or failed (kubectl waits for one condition).
finished() {
  kubectl wait --for=condition=complete "$1" --timeout="$2" &
  local complete=$!
  kubectl wait --for=condition=failed "$1" --timeout="$2" &
  local failed=$!
  wait -n "$complete" "$failed" || true
  kill "$complete" "$failed" 2>/dev/null || true
}
finished "job/relbench-$study-study" 168h
manifest | kubectl apply -l relbench.dev/part=merge -f -
finished "job/relbench-$study-merge" 1h
kubectl logs "job/relbench-$study-merge"
