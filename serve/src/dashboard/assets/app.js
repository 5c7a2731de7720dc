// factory dashboard: applies a live run's updates, pushed by the server as
// Server-Sent Events, to the page, and ticks the elapsed clocks. Nothing here polls.
(function () {
  "use strict";

  function time(s) {
    var t = Date.parse(s || "");
    return isNaN(t) ? null : t;
  }

  function fmt(ms) {
    var s = Math.floor(ms / 1000);
    if (s < 60) return (ms / 1000).toFixed(1) + "s";
    if (s < 3600) return Math.floor(s / 60) + "m " + String(s % 60).padStart(2, "0") + "s";
    return Math.floor(s / 3600) + "h " + String(Math.floor((s % 3600) / 60)).padStart(2, "0") + "m";
  }

  function tick() {
    document.querySelectorAll(".clock[data-since]").forEach(function (el) {
      var since = time(el.dataset.since);
      if (since === null) return;
      var until = time(el.dataset.until);
      el.textContent = fmt((until === null ? Date.now() : until) - since);
    });
  }

  function find(attr, value) {
    return document.querySelector("[" + attr + "=\"" + CSS.escape(value) + "\"]");
  }

  function applyNode(n) {
    var g = find("data-node", n.node);
    if (g) {
      g.setAttribute("data-state", n.state);
      var badge = g.querySelector(".badge");
      if (badge) badge.textContent = n.reloops > 0 ? "\u21bb" + n.reloops : "";
    }
    var row = find("data-row", n.node);
    if (!row) return;
    row.setAttribute("data-state", n.state);
    row.querySelector(".state").textContent = n.state;
    row.querySelector(".visits").textContent = n.visits;
    row.querySelector(".verdict").textContent = n.verdict || "";
    var el = row.querySelector(".elapsed");
    if (n.state === "running" && n.started_at) {
      el.dataset.since = n.started_at;
    } else {
      delete el.dataset.since;
      el.textContent = n.duration_ms != null ? fmt(n.duration_ms) : "";
    }
  }

  function applyRun(r) {
    var st = document.getElementById("run-status");
    if (st) {
      st.textContent = r.status;
      st.className = "tag s-" + r.status;
    }
    var started = document.getElementById("run-started");
    if (started && r.started_at) started.textContent = r.started_at;
    var el = document.getElementById("run-elapsed");
    if (el) {
      if (r.started_at) el.dataset.since = r.started_at;
      el.dataset.until = r.ended_at || "";
    }
  }

  function applyGate(g) {
    var box = document.getElementById("gate");
    if (!box) return;
    box.innerHTML = "<span class=\"muted\">current gate</span> <strong class=\"g-node\"></strong> " +
      "<span class=\"g-question\"></span> <span class=\"g-verdict tag\"></span>";
    box.querySelector(".g-node").textContent = g.node;
    box.querySelector(".g-question").textContent = g.question || "";
    box.querySelector(".g-verdict").textContent = g.verdict || (g.state === "running" ? "deciding…" : "waiting");
  }

  function notice(text) {
    var box = document.getElementById("notices");
    if (!box) return;
    var p = document.createElement("p");
    p.className = "degraded";
    p.textContent = text;
    box.appendChild(p);
  }

  var live = document.getElementById("live");
  if (live && live.dataset.over !== "true" && window.EventSource) {
    var es = new EventSource(live.dataset.src);
    es.addEventListener("update", function (e) {
      var d = JSON.parse(e.data);
      (d.nodes || []).forEach(applyNode);
      if (d.run) applyRun(d.run);
      if (d.gate) applyGate(d.gate);
      document.body.dataset.updates = String(Number(document.body.dataset.updates || 0) + 1);
    });
    es.addEventListener("notice", function (e) { notice(e.data); });
    es.addEventListener("end", function () {
      es.close();
      document.body.dataset.ended = "true";
    });
  }
  tick();
  setInterval(tick, 1000);
})();
