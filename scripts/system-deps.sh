#!/usr/bin/env bash
# Installs the Debian packages the book and its browser tests use, when this shell can:
#   fonts-noto-cjk  Chinese labels in figures (without it figures fall back to English labels)
#   chromium        the real-browser tests (without it they skip, saying so)
#   npm             fetches the website's browser assets once (book/package.json) for `make site`
# Needs root and apt-get; otherwise prints what is missing and carries on.
set -u
want=()
fc-list 2>/dev/null | grep -q "Noto Sans CJK" || want+=(fonts-noto-cjk)
command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || want+=(chromium)
command -v npm >/dev/null 2>&1 || [ -d .cache/site-npm/node_modules ] || want+=(npm)
[ ${#want[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing Debian packages: ${want[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null \
        || echo "warning: could not install ${want[*]}; see the README" >&2
    rm -rf "${HOME}/.cache/matplotlib"
else
    echo "note: missing ${want[*]} (needs root + apt-get): figures use English labels, browser tests skip," \
         "the website needs npm once" >&2
fi
exit 0
