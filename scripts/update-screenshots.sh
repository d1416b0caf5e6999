#!/usr/bin/env bash
# Copy the screenshots the browser tests produced (build/screenshots, or $PROCTOR_SCREENSHOTS)
# into docs/screenshots, where the README shows them. Run after `make test`.
set -euo pipefail
cd "$(dirname "$0")/.."
from="${PROCTOR_SCREENSHOTS:-build/screenshots}"
mkdir -p docs/screenshots
for page in findings inbox trace reviews graph activity plans settings; do
  for size in desktop 375; do
    cp "$from/$page-$size.png" "docs/screenshots/$page-$size.png"
  done
done
for shot in xss-inert-desktop subagent-card-desktop goals-desktop notifications-panel \
    graph-timeline-examples graph-timeline-corpus graph-timeline-corpus-zoomed graph-timeline-corpus-375; do
  cp "$from/$shot.png" docs/screenshots/
done
ls docs/screenshots
