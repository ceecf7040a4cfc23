#!/bin/bash
# The dashboard in a real browser (issue 23): headless Chromium driven
# through ChromeDriver's WebDriver protocol (a few lines of python3 below,
# no client library).  The page shows what vigilctl --json status says,
# changes within 2 s of a stop from outside without a reload, restarts a
# job with its button (the pid really changes), puts the failing job first
# under an alarm, reads as cards on a phone, and logs no console error.
# Screenshots, narrow and wide, are kept in $ARTIFACTS (default:
# ./test-artifacts).
. "$(dirname "$0")/lib.sh"

# Heavy, and about behaviour that stage 1 of tests/run-all.sh sees:
# not again under valgrind (VIGILD_WRAPPER) nor in distcheck (VIGIL_SKIP_SLOW).
[ -z "${VIGILD_WRAPPER:-}" ] || skip "the page is the same under valgrind; http.sh covers its server there"
[ -z "${VIGIL_SKIP_SLOW:-}" ] || skip "VIGIL_SKIP_SLOW is set"
[ -z "${VIGIL_SKIP_TIMING:-}" ] || skip "VIGIL_SKIP_TIMING is set (a timing, load or container test: the gcc stage runs it)"

CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
CHROMEDRIVER=${CHROMEDRIVER:-/usr/bin/chromedriver}
[ -x "$CHROMIUM" ] && [ -x "$CHROMEDRIVER" ] ||
	skip_fixable "chromium and chromium-driver not installed"
need_cmd curl curl
ARTIFACTS=${ARTIFACTS:-$PWD/test-artifacts}
mkdir -p "$ARTIFACTS"

http_token
cat >"$T/vigil.conf" <<EOF
http_listen = "127.0.0.1:0"
http_token_file = "$T/token"
EOF
job web 'command = "sleep 100000"' 'instances = 2'
job api 'command = "sleep 100000"'
job crash 'command = "sh -c \"echo boom >&2; exit 3\""' 'restart_delay = "20ms"' \
	'restart_delay_max = "20ms"' 'max_restarts = 2'
job mailer 'kind = "queue"' 'command = "cat"' 'autostart = false'
job report 'kind = "periodic"' 'every = "1h"' 'command = "true"'
start_vigild
http_port
wait_state web@1 RUNNING
wait_state crash FATAL
for m in 1 2 3; do ctl enqueue mailer "m$m" >/dev/null || fail "enqueue"; done

# ChromeDriver on a port of its own.
DPORT=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$CHROMEDRIVER" --port="$DPORT" >"$T/chromedriver.log" 2>&1 &
track $!
up() { curl -sf "http://127.0.0.1:$DPORT/status" >/dev/null; }
retry 20 up || fail "chromedriver did not start: $(tail -n 5 "$T/chromedriver.log")"

/usr/bin/python3 - "$DPORT" "http://127.0.0.1:$PORT/" "$TOKEN" "$CHROMIUM" \
	"$T/chrome-profile" "$ARTIFACTS" "$VIGILCTL" "$SOCK" >"$T/browser.out" 2>&1 <<'EOF' &
import json, subprocess, sys, time, urllib.request, base64

dport, url, token, chromium, profile, artifacts, vigilctl, sock = sys.argv[1:9]
wd = "http://127.0.0.1:%s" % dport
failed = []

def call(method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(wd + path, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.load(r)["value"]

def check(what, ok):
    print(("ok: " if ok else "FAIL: ") + what, flush=True)
    if not ok:
        failed.append(what)

def ctl(*args):
    return subprocess.run([vigilctl, "-s", sock] + list(args), check=True,
                          capture_output=True, text=True).stdout

def js(script, *args):
    return call("POST", "/session/%s/execute/sync" % sid,
                {"script": script, "args": list(args)})

def until(fn, seconds):
    end = time.monotonic() + seconds
    while True:
        v = fn()
        if v or time.monotonic() > end:
            return v
        time.sleep(0.05)

def rows():
    return js("return [...document.querySelectorAll('#jobs tbody tr')]"
              ".map(tr => [tr.dataset.job, tr.dataset.state,"
              " tr.querySelector('[data-key=pid]').textContent])")

def shot(name, w, h):
    call("POST", "/session/%s/window/rect" % sid, {"width": w, "height": h})
    time.sleep(0.3)
    png = base64.b64decode(call("GET", "/session/%s/screenshot" % sid))
    open("%s/%s" % (artifacts, name), "wb").write(png)
    check("screenshot %s (%dx%d, %d bytes)" % (name, w, h, len(png)), len(png) > 5000)

caps = {"capabilities": {"alwaysMatch": {
    "browserName": "chrome",
    "goog:loggingPrefs": {"browser": "ALL"},
    "goog:chromeOptions": {"binary": chromium, "args": [
        "--headless=new", "--no-sandbox", "--disable-gpu",
        "--disable-dev-shm-usage", "--user-data-dir=" + profile,
        "--window-size=1400,900"]}}}}
sid = call("POST", "/session", caps)["sessionId"]
try:
    call("POST", "/session/%s/url" % sid, {"url": url})
    # No token yet: the page asks for it.
    check("the login form shows", until(lambda: js(
        "return !document.getElementById('login').hidden"), 10))
    el = call("POST", "/session/%s/element" % sid,
              {"using": "css selector", "value": "#token"})
    eid = list(el.values())[0]
    call("POST", "/session/%s/element/%s/value" % (sid, eid), {"text": token + "\n"})
    check("the jobs show after the token", until(lambda: len(rows()) >= 6, 10))

    # The states shown are vigilctl's.
    def same():
        st = {j["name"]: j["state"] for j in json.loads(ctl("--json", "status"))["jobs"]}
        shown = {r[0]: r[1] for r in rows()}
        return st == shown and st
    check("states match vigilctl --json status", until(same, 5))
    r = rows()
    check("the failing job comes first", r[0][0] == "crash" and r[0][1] == "FATAL")
    alarm = js("const a = document.getElementById('alarm'); return a.hidden ? '' : a.textContent")
    check("the alarm names crash: %r" % alarm, "crash" in alarm and "failing" in alarm)
    check("the title says it", "failing" in js("return document.title"))
    q = js("return document.querySelector('tr[data-job=mailer] [data-key=queue]').textContent")
    check("mailer's queue: %r" % q, q.startswith("3 waiting"))
    nr = js("return document.querySelector('tr[data-job=report] [data-key=next]').textContent")
    check("report's next run: %r" % nr, nr.startswith("in "))

    # A stop from outside shows within 2 s, without a reload.
    js("window.__marker = 1")
    t0 = time.monotonic()
    ctl("stop", "api")
    seen = until(lambda: dict((x[0], x[1]) for x in rows()).get("api") == "STOPPED", 5)
    dt = time.monotonic() - t0
    check("the stop shows in %.2fs" % dt, seen and dt < 2)
    check("the page was not reloaded", js("return window.__marker") == 1)
    ctl("start", "api")
    check("the start shows", until(lambda: dict((x[0], x[1]) for x in rows()).get("api") == "RUNNING", 5))

    # The restart button: the pid changes, in vigild and on the page.
    old = ctl("pid", "web@0").strip()
    until(lambda: dict((x[0], x[2]) for x in rows()).get("web@0") == old, 5)
    b = call("POST", "/session/%s/element" % sid, {"using": "css selector",
             "value": "tr[data-job='web@0'] button[data-verb=restart]"})
    call("POST", "/session/%s/element/%s/click" % (sid, list(b.values())[0]), {})
    new = until(lambda: (lambda p: p if p and p != old else None)(
        dict((x[0], x[2]) for x in rows()).get("web@0")), 10)
    check("restart changed the pid shown (%s -> %s)" % (old, new), new is not None)
    check("vigild has that pid", ctl("pid", "web@0").strip() == new)

    shot("dashboard-wide.png", 1920, 1080)
    shot("dashboard-4k.png", 3840, 2160)
    shot("dashboard-narrow.png", 390, 844)
    card = js("return getComputedStyle(document.querySelector('#jobs tbody tr')).display")
    check("on a phone each job is a card (%s)" % card, card == "block")
    head = js("return getComputedStyle(document.querySelector('#jobs thead')).display")
    check("on a phone the table head is hidden", head == "none")
    wide = js("return document.documentElement.scrollWidth <= window.innerWidth + 1")
    check("on a phone nothing runs off the side", wide)

    logs = call("POST", "/session/%s/se/log" % sid, {"type": "browser"})
    errs = [l["message"] for l in logs if l.get("level") == "SEVERE"]
    check("no console errors: %r" % errs[:3], not errs)
finally:
    call("DELETE", "/session/%s" % sid)
sys.exit(1 if failed else 0)
EOF
B=$!
track "$B"
wait "$B" || { cat "$T/browser.out"; fail "the browser checks failed"; }
cat "$T/browser.out"
log "screenshots in $ARTIFACTS"
stop_vigild
log "dashboard: true to status, live, its buttons work, fit for a phone"
