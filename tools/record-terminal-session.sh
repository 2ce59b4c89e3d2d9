#!/bin/bash
# Records docs/terminal-session.txt: `quota status`, `quota jobs ls` and `quota local why` in a
# real tmux terminal of 100 columns, on `quota local serve --virtual --seed 1` (port 8771).
# Usage: tools/record-terminal-session.sh [VENV_BIN]   (in a private network: unshare -n ...)
set -e
WT=$(cd "$(dirname "$0")/.." && pwd)
export PYTHONPATH=$WT PATH=${1:-$WT/.venv/bin}:$PATH NO_COLOR=1 TERM=xterm-256color
RUN=$(mktemp -d)
cp "$WT/docs/examples/job.json" "$RUN/"
cd "$RUN"
ip link set lo up 2>/dev/null || true
SOCK=$RUN/tmux.sock
rm -f $SOCK
tmux -S $SOCK new-session -d -s rec -x 100 -y 200
tmux -S $SOCK new-window -d -t rec:9 "quota local serve --virtual --seed 1 > $RUN/serve.log 2>&1"
for i in $(seq 50); do grep -q "Ctrl-C stops it" $RUN/serve.log 2>/dev/null && break; sleep 0.3; done
idle() { [ "$(tmux -S $SOCK capture-pane -p -t rec:0 | sed -e 's/[[:space:]]*$//' | grep -v '^$' | tail -1)" = '$' ]; }
send() {
  tmux -S $SOCK send-keys -t rec:0 "$1" Enter; sleep 1
  for i in $(seq 120); do idle && return; sleep 0.5; done
}
send "export PATH=$PATH PYTHONPATH=$PYTHONPATH NO_COLOR=1 AWS_ENDPOINT_URL_BATCH=http://127.0.0.1:8771 AWS_ENDPOINT_URL_SSM=http://127.0.0.1:8771 AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing AWS_DEFAULT_REGION=us-east-1 PS1='\$ '"
send "clear"
sleep 1
J="--payload job.json"
send "quota jobs -o seed-demo submit nightly-finetune-llama-70b --share QS1 $J --priority 3"
send "quota jobs -o seed-demo submit qs1-eval-sweep-lr-3e-4 --share QS1 $J --priority 2"
send "quota jobs -o seed-demo submit qs1-ablation-no-warmup --share QS1 $J --priority 1"
send "quota local advance 10"
send "quota jobs -o seed-demo submit qs2-recsys-retrain --share QS2 $J"
send "quota local advance 10"
send "quota status -o seed-demo"
send "quota jobs -o seed-demo ls"
send "quota local why qs1-eval-sweep-lr-3e-4"
sleep 2
{
  echo "# quota at a terminal of 100 columns: recorded by tools/record-terminal-session.sh"
  echo "# (tmux capture-pane of a 100-column window; quota local serve --virtual --seed 1)"
  echo
  tmux -S $SOCK capture-pane -p -t rec:0 -S - -E - | sed -e 's/[[:space:]]*$//' | cat -s
} > "$WT/docs/terminal-session.txt"
tmux -S $SOCK kill-server
