// vigil's dashboard: polls the JSON API once a second (never two polls at
// once), shows every job instance, puts failures first and in red, and
// sends start/stop/restart with the token.  Plain JavaScript, no library.
"use strict";

const POLL_MS = 1000;
const TOKEN_KEY = "vigil-token";
let token = sessionStorage.getItem(TOKEN_KEY);
let lastOk = 0;
let timer = null;
let busy = false; // a poll is under way
let again = false; // and another was asked for meanwhile
let canAct = false; // the buttons work (a token, or a unix peer's rights)
const rows = new Map();

const $ = (id) => document.getElementById(id);

// The class of a state: ok, busy, warn, bad or off.
function stateClass(j) {
  switch (j.state) {
    case "RUNNING":
    case "WAITING":
      return "ok";
    case "STARTING":
    case "STOPPING":
      return "busy";
    case "BACKOFF":
    case "FATAL":
    case "BROKEN":
      return "bad";
    case "BLOCKED":
      return "warn";
    case "EXITED":
      return j.last_exit && j.last_exit !== "exit 0" ? "bad" : "off";
    default:
      return "off";
  }
}

function duration(s) {
  if (s === null || s === undefined) return "";
  s = Math.floor(s);
  const d = Math.floor(s / 86400), h = Math.floor(s / 3600) % 24;
  const m = Math.floor(s / 60) % 60, sec = s % 60;
  if (d > 0) return d + "d " + h + "h";
  if (h > 0) return h + "h " + m + "m";
  if (m > 0) return m + "m " + sec + "s";
  return sec + "s";
}

function nextRun(j) {
  if (j.next_start_s !== null && j.next_start_s !== undefined)
    return "retry in " + duration(j.next_start_s);
  if (j.next_run_us) {
    const s = (j.next_run_us / 1000 - Date.now()) / 1000;
    return s > 0 ? "in " + duration(s) : "now";
  }
  return "";
}

function queueText(q) {
  if (!q) return "";
  let t = q.available + " waiting, " + q.running + " running";
  if (q.delayed) t += ", " + q.delayed + " delayed";
  if (q.dead) t += ", " + q.dead + " dead";
  return t;
}

async function api(method, path) {
  const headers = {};
  if (token) headers.Authorization = "Bearer " + token;
  const r = await fetch(path, { method, headers, cache: "no-store" });
  let body = null;
  try {
    body = await r.json();
  } catch (e) {
    body = null;
  }
  return { status: r.status, body };
}

function showLogin(why) {
  $("login").hidden = false;
  $("jobs").hidden = true;
  $("empty").hidden = true;
  $("alarm").hidden = true;
  $("logout").hidden = true;
  const e = $("login-error");
  e.hidden = !why;
  e.textContent = why || "";
  $("token").focus();
}

function say(text) {
  const m = $("message");
  m.textContent = text;
  m.hidden = false;
  clearTimeout(say.t);
  say.t = setTimeout(() => { m.hidden = true; }, 5000);
}

function cell(tr, key, label, cls) {
  let td = tr.querySelector("td[data-key='" + key + "']");
  if (!td) {
    td = document.createElement("td");
    td.dataset.key = key;
    td.dataset.label = label;
    if (cls) td.className = cls;
    tr.appendChild(td);
  }
  return td;
}

function setText(td, text) {
  if (td.textContent !== text) td.textContent = text;
  td.classList.toggle("empty", text === "");
}

async function act(name, verb, tr) {
  const buttons = tr.querySelectorAll("button");
  buttons.forEach((b) => { b.disabled = true; });
  try {
    const r = await api("POST", "/api/v1/jobs/" + encodeURIComponent(name) + "/" + verb);
    if (r.status === 401) {
      showLogin("The token was refused.");
    } else if (r.body) {
      const lines = (r.body.output || []).concat(r.body.errors || []);
      say(lines.join("; ") || name + ": " + verb + " (" + r.status + ")");
    } else {
      say(name + ": " + verb + " failed (" + r.status + ")");
    }
  } catch (e) {
    say(name + ": " + verb + ": vigild does not answer");
  }
  buttons.forEach((b) => { b.disabled = false; });
  poll();
}

function row(j) {
  let tr = rows.get(j.name);
  if (!tr) {
    tr = document.createElement("tr");
    tr.dataset.job = j.name;
    rows.set(j.name, tr);
    cell(tr, "name", "Job", "name");
    cell(tr, "state", "State");
    cell(tr, "pid", "Pid", "num");
    cell(tr, "uptime", "Uptime", "num");
    cell(tr, "restarts", "Restarts", "num");
    cell(tr, "exit", "Last exit");
    cell(tr, "next", "Next run");
    cell(tr, "queue", "Queue");
    cell(tr, "node", "Node");
    const a = cell(tr, "actions", "", "actions");
    for (const verb of ["start", "stop", "restart"]) {
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = verb[0].toUpperCase() + verb.slice(1);
      b.dataset.verb = verb;
      b.setAttribute("aria-label", verb + " " + j.name);
      b.addEventListener("click", () => act(tr.dataset.job, verb, tr));
      a.appendChild(b);
    }
    const st = document.createElement("span");
    st.className = "state";
    cell(tr, "state", "State").appendChild(st);
    const why = document.createElement("span");
    why.className = "why";
    cell(tr, "state", "State").appendChild(why);
  }
  return tr;
}

function render(jobs, queues) {
  const byQueue = new Map((queues || []).map((q) => [q.job, q]));
  const failing = jobs.filter((j) => stateClass(j) === "bad");
  const running = jobs.filter((j) => j.state === "RUNNING").length;
  const stopped = jobs.filter((j) => stateClass(j) === "off").length;
  jobs.sort((a, b) => {
    const fa = stateClass(a) === "bad" ? 0 : 1, fb = stateClass(b) === "bad" ? 0 : 1;
    return fa - fb || a.name.localeCompare(b.name, undefined, { numeric: true });
  });

  const summary = $("summary");
  summary.replaceChildren();
  for (const [n, what, cls] of [[jobs.length, "jobs", ""], [running, "running", "ok"],
    [failing.length, "failing", failing.length ? "bad" : ""], [stopped, "stopped", ""]]) {
    const s = document.createElement("span");
    s.textContent = n + " " + what;
    if (cls) s.className = cls;
    summary.appendChild(s);
  }
  const alarm = $("alarm");
  if (failing.length) {
    alarm.textContent = "\u2716 " + failing.length + (failing.length === 1 ? " job failing: " : " jobs failing: ") +
      failing.map((j) => j.name + " (" + j.state + ")").join(", ");
    alarm.hidden = false;
    document.title = "\u2716 " + failing.length + " failing \u2014 vigil";
  } else {
    alarm.hidden = true;
    document.title = "vigil \u2014 " + running + " running";
  }

  const tbody = $("jobs").tBodies[0];
  const seen = new Set();
  for (const j of jobs) {
    const tr = row(j);
    seen.add(j.name);
    const cls = stateClass(j);
    tr.className = cls === "bad" ? "failing" : "";
    tr.dataset.state = j.state;
    setText(cell(tr, "name", "Job"), j.name);
    const st = cell(tr, "state", "State");
    const badge = st.querySelector(".state");
    badge.textContent = j.state;
    badge.className = "state " + cls;
    const why = st.querySelector(".why");
    let reason = j.config_error || (cls === "bad" || cls === "warn" ? j.last_end || j.reason || "" : "");
    if (reason === j.last_exit) reason = "";
    if (why.textContent !== reason) why.textContent = reason;
    setText(cell(tr, "pid", "Pid"), j.pid === null || j.pid === undefined ? "" : String(j.pid));
    setText(cell(tr, "uptime", "Uptime"), duration(j.uptime_s));
    setText(cell(tr, "restarts", "Restarts"), j.restarts === undefined ? "" : String(j.restarts));
    setText(cell(tr, "exit", "Last exit"), j.last_exit || "");
    setText(cell(tr, "next", "Next run"), nextRun(j));
    setText(cell(tr, "queue", "Queue"), j.kind === "queue" ? queueText(byQueue.get(j.job)) : "");
    setText(cell(tr, "node", "Node"), j.node || "");
    const hide = !canAct || j.state === "BROKEN";
    tr.querySelectorAll("button").forEach((b) => { b.hidden = hide; });
    tbody.appendChild(tr);
  }
  for (const [name, tr] of rows) {
    if (!seen.has(name)) {
      tr.remove();
      rows.delete(name);
    }
  }
  $("jobs").hidden = jobs.length === 0;
  $("empty").hidden = jobs.length !== 0;
}

async function poll() {
  if (busy) {
    again = true;
    return;
  }
  busy = true;
  clearTimeout(timer);
  timer = null;
  let next = POLL_MS;
  try {
    const [j, q] = await Promise.all([api("GET", "/api/v1/jobs"), api("GET", "/api/v1/queues")]);
    if (j.status === 401) {
      showLogin(token ? "The token was refused." : "");
      next = null;
    } else if (j.status !== 200 || !j.body) {
      throw new Error("status " + j.status);
    } else {
      $("login").hidden = true;
      $("logout").hidden = !token;
      $("offline").hidden = true;
      render(j.body.jobs || [], q.status === 200 && q.body ? q.body.queues : []);
      lastOk = Date.now();
      $("updated").textContent = "updated " + new Date(lastOk).toLocaleTimeString();
    }
  } catch (e) {
    const o = $("offline");
    o.textContent = "vigild does not answer" +
      (lastOk ? " since " + new Date(lastOk).toLocaleTimeString() + "; what is shown is old" : "");
    o.hidden = false;
  }
  busy = false;
  if (again) {
    again = false;
    next = 0;
  }
  if (next !== null) timer = setTimeout(poll, next);
}

// Ask what this peer may do (never a 401 to find out); poll if it may read.
async function begin() {
  try {
    const w = await api("GET", "/api/v1/whoami");
    if (w.status !== 200 || !w.body) throw new Error("status " + w.status);
    if (!w.body.read) {
      if (!w.body.token) {
        showLogin("This vigild has no http_token_file: only /metrics and /healthz answer here.");
        $("login").querySelector("button").disabled = true;
      } else {
        showLogin(token ? "The token was refused." : "");
      }
      return;
    }
    canAct = w.body.act;
    poll();
  } catch (e) {
    const o = $("offline");
    o.textContent = "vigild does not answer";
    o.hidden = false;
    setTimeout(begin, POLL_MS);
  }
}

$("login").addEventListener("submit", (ev) => {
  ev.preventDefault();
  token = $("token").value.trim();
  $("token").value = "";
  sessionStorage.setItem(TOKEN_KEY, token);
  begin();
});
$("logout").addEventListener("click", () => {
  token = null;
  sessionStorage.removeItem(TOKEN_KEY);
  clearTimeout(timer);
  showLogin("");
});
begin();
