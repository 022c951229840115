#!/usr/bin/env bash
# Launch the learner over the machines of a DeepSpeed hostfile (multi-node GRPO).
#
#   RLAR_NATS_URL=tls://nats-1:4222,tls://nats-2:4222 deploy/deepspeed/launch-learner.sh \
#       [--hostfile deploy/deepspeed/hostfile] [--config deploy/configs/demo.toml] [-- --set k=v ...]
#
# Rank 0 joins the bus as the `learner` role and broadcasts each step to the other ranks over NCCL; the
# others never touch the bus. DeepSpeed copies the variables named in .deepspeed_env (written here, in the
# working directory) to every node: the bus URL and credentials, and NCCL settings if you set any.
# Use `learner.weight_sync = "objstore"` (or a filesystem every rollout host mounts) across machines.
set -euo pipefail
hostfile="deploy/deepspeed/hostfile"
config="deploy/configs/demo.toml"
master_port="${MASTER_PORT:-29500}"
while [ $# -gt 0 ]; do
  case "$1" in
    --hostfile) hostfile="$2"; shift 2 ;;
    --config) config="$2"; shift 2 ;;
    --) shift; break ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
: "${RLAR_NATS_URL:?set RLAR_NATS_URL to the cluster's URL list}"
master_addr="${MASTER_ADDR:-$(awk '!/^#/ && NF {print $1; exit}' "$hostfile")}"
{
  echo "RLAR_NATS_URL=$RLAR_NATS_URL"
  echo "RLAR_NATS_USER=learner"
  for v in RLAR_NATS_PASSWORD RLAR_NATS_TLS_CA RLAR_NATS_TLS_CERT RLAR_NATS_TLS_KEY NCCL_SOCKET_IFNAME NCCL_IB_DISABLE; do
    if [ -n "${!v:-}" ]; then echo "$v=${!v}"; fi
  done
} > .deepspeed_env
chmod 600 .deepspeed_env
# --no_local_rank: the actor launcher takes no --local_rank argument (ranks come from the environment).
exec deepspeed --hostfile "$hostfile" --master_addr "$master_addr" --master_port "$master_port" \
  --no_local_rank --module actors learner --nats "$RLAR_NATS_URL" --config "$config" \
  --set topology.replicas=3 --set 'learner.weight_sync="objstore"' "$@"
