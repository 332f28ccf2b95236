#!/usr/bin/env bash
# Superseded by benches/fleet.sh, which measures plan-drain (1 and 10 nodes) offline against
# `jq length` together with the other commands, live and watch. This runs its offline part.
exec bash "$(dirname "$0")/fleet.sh" --no-live --no-watch "$@"
