#!/bin/sh
# Entrypoint of the Tidings image (deploy/docker/Dockerfile): runs the `tidings` command line with the arguments
# of `docker run IMAGE …` — migrate, api, dispatcher, serve, keys generate, retention run, … — and `serve` when
# there are none. `exec` makes Node.js the direct child of tini (PID 1), so SIGTERM reaches Tidings' graceful stop.
set -eu
app_dir=$(CDPATH='' cd -- "$(dirname -- "$0")/../.." && pwd)
if [ "$#" -eq 0 ]; then
  set -- serve
fi
exec node "$app_dir/bin/tidings.ts" "$@"
