// jobstore serve: keeps the root's page current from the server's events.
// Everything a job's submitter or runner wrote is set as text, never markup.
"use strict";
(function () {
  const tbody = document.getElementById("rows");
  const live = document.getElementById("live");
  const problem = document.getElementById("problem");
  const empty = document.getElementById("empty");
  const range = document.getElementById("range");
  const query = new URLSearchParams(location.search);
  query.delete("done"); query.delete("id");
  const actions = document.body.dataset.actions === "1"; // not --read-only
  let shown = new Map(); // job ID -> its row
  for (const tr of tbody.rows) shown.set(tr.dataset.id, tr);

  function fmtAge(ms) {
    const s = ms / 1000;
    if (ms < 0) return "-" + fmtAge(-ms);
    if (s < 1) return Math.floor(ms) + "ms";
    if (s < 10) return s.toFixed(1) + "s";
    if (s < 60) return Math.floor(s) + "s";
    const m = Math.floor(s / 60), h = Math.floor(s / 3600), d = Math.floor(s / 86400);
    const two = (n) => String(n).padStart(2, "0");
    if (s < 3600) return m + "m" + two(Math.floor(s) % 60) + "s";
    if (s < 86400) return h + "h" + two(m % 60) + "m";
    return d + "d" + two(h % 24) + "h";
  }
  // dueText is what a row's .due says at now (serve_schedule.go's dueText).
  function dueText(span, now) {
    if (!span.dataset.due) return "";
    const left = Date.parse(span.dataset.due) - now;
    if (!(left > 0)) return "";
    return (span.dataset.retry ? "retry due in " : "due in ") + fmtAge(left);
  }
  function pct(p) { return p == null ? "-" : Math.floor(p * 100 + 1e-9) + "%"; }
  function cell(tr, cls, label) {
    const td = document.createElement("td");
    td.className = cls; td.dataset.label = label; tr.appendChild(td); return td;
  }
  function build(row) {
    const tr = document.createElement("tr");
    tr.dataset.id = row.id;
    if (actions) {
      const box = document.createElement("input");
      box.type = "checkbox"; box.name = "id"; box.value = row.id;
      box.setAttribute("form", "bulk"); box.setAttribute("aria-label", "select " + row.id);
      cell(tr, "pick", "").appendChild(box);
    }
    const a = document.createElement("a");
    a.href = "/jobs/" + encodeURIComponent(row.id); a.textContent = row.id;
    cell(tr, "id", "ID").appendChild(a);
    const kd = cell(tr, "kind", "kind");
    kd.appendChild(document.createTextNode(""));
    const prio = document.createElement("span"); prio.className = "prio"; kd.appendChild(prio);
    const st = cell(tr, "state", "state");
    const badge = document.createElement("span"); badge.className = "badge"; st.appendChild(badge);
    st.appendChild(document.createTextNode(" "));
    const due = document.createElement("span"); due.className = "due"; st.appendChild(due);
    st.appendChild(document.createTextNode(" "));
    const note = document.createElement("span"); note.className = "note"; st.appendChild(note);
    const pr = cell(tr, "progress", "progress");
    const line = document.createElement("span"); line.className = "barline"; pr.appendChild(line);
    const bar = document.createElement("progress"); bar.max = 1; line.appendChild(bar);
    line.appendChild(document.createTextNode(" "));
    const p = document.createElement("span"); p.className = "pct"; line.appendChild(p);
    pr.appendChild(document.createTextNode(" "));
    const msg = document.createElement("span"); msg.className = "msg"; pr.appendChild(msg);
    cell(tr, "attempt", "attempt"); cell(tr, "host", "host");
    cell(tr, "age", "age");
    if (actions) cell(tr, "act", "");
    update(tr, row);
    return tr;
  }
  // newer reports whether row is not older than what tr shows: a page of
  // rows loaded while events arrive may carry a record an event replaced.
  function newer(tr, row) {
    if (!tr.dataset.seq) return true;
    const seq = Number(tr.dataset.seq), at = Date.parse(tr.dataset.updated || "");
    return row.seq >= seq || (row.updated_at && Date.parse(row.updated_at) > at);
  }
  function update(tr, row) {
    if (!newer(tr, row)) return;
    tr.dataset.seq = String(row.seq);
    tr.dataset.updated = row.updated_at || "";
    if (actions && tr.className !== "st-" + row.state) setActions(tr.querySelector("td.act"), row);
    tr.className = "st-" + row.state;
    tr.querySelector("td.kind").firstChild.nodeValue = row.kind;
    tr.querySelector(".prio").textContent = row.priority ? " priority " + row.priority : "";
    const due = tr.querySelector(".due");
    due.dataset.due = row.due || ""; due.dataset.retry = row.retrying ? "1" : "";
    due.textContent = dueText(due, Date.now());
    tr.querySelector(".badge").textContent = row.state;
    tr.querySelector(".note").textContent = row.note;
    const bar = tr.querySelector("progress");
    bar.value = row.progress == null ? 0 : row.progress; // unknown: empty, not the indeterminate animation
    tr.querySelector(".pct").textContent = pct(row.progress);
    tr.querySelector(".msg").textContent = row.error || row.message;
    tr.querySelector("td.attempt").textContent = row.max_attempts > 1 ? row.attempt + "/" + row.max_attempts :
      (row.attempt ? String(row.attempt) : "");
    tr.querySelector("td.host").textContent = row.host;
    const age = tr.querySelector("td.age");
    age.dataset.at = row.submitted_at || "";
    age.textContent = row.submitted_at ? fmtAge(Date.now() - Date.parse(row.submitted_at)) : "-";
  }
  // rowActions are the buttons of a row in state (serve_bulk.go's rowActions).
  function rowActions(state) {
    switch (state) {
      case "queued": case "running": return ["cancel"];
      case "failed": case "lost": case "cancelled": return ["retry", "remove"];
      case "succeeded": return ["remove"];
    }
    return [];
  }
  function setActions(td, row) {
    const buttons = rowActions(row.state).map((action) => {
      const b = document.createElement("button");
      b.type = "submit"; b.textContent = action; b.dataset.action = action;
      b.setAttribute("form", "rowact");
      if (action === "remove") {
        b.setAttribute("formaction", "/bulk/remove"); b.name = "id"; b.value = row.id; b.className = "danger";
      } else {
        b.setAttribute("formaction", "/jobs/" + encodeURIComponent(row.id) + "/" + action);
      }
      return b;
    });
    td.replaceChildren(...buttons);
  }
  function setCounts(counts) {
    for (const b of document.querySelectorAll("[data-count]")) {
      const n = counts[b.dataset.count];
      b.textContent = n == null ? "0" : String(n);
    }
  }
  let loading = false, again = false;
  async function refresh() {
    if (loading) { again = true; return; }
    loading = true;
    try {
      const res = await fetch("/api/rows?" + query.toString(), { credentials: "same-origin" });
      if (!res.ok) throw new Error("HTTP " + res.status);
      const page = await res.json();
      const next = new Map();
      const frag = document.createDocumentFragment();
      for (const row of page.rows) {
        let tr = shown.get(row.id);
        if (tr) update(tr, row); else tr = build(row);
        next.set(row.id, tr); frag.appendChild(tr);
      }
      tbody.replaceChildren(frag);
      shown = next;
      setCounts(page.counts);
      empty.hidden = page.rows.length > 0;
      const first = (page.page - 1) * page.size + 1;
      range.textContent = page.matched ? first + "–" + (first + page.rows.length - 1) + " of " + page.matched : "0 of 0";
      problem.hidden = !page.error; problem.textContent = page.error;
    } catch (e) {
      live.dataset.state = "down"; live.textContent = "cannot load the rows: " + e.message;
    } finally {
      loading = false;
      if (again) { again = false; setTimeout(refresh, 0); }
    }
  }
  // Rows added or removed change the page: load it again, at most once a second.
  let pending = null;
  function soon() {
    if (pending) return;
    pending = setTimeout(() => { pending = null; refresh(); }, 1000);
  }
  function connect() {
    const es = new EventSource("/events");
    es.onopen = () => {
      live.dataset.state = "live"; live.textContent = "live";
      refresh(); // what changed since the page was made, or while away
    };
    es.onerror = () => { live.dataset.state = "down"; live.textContent = "reconnecting…"; };
    es.addEventListener("job", (ev) => {
      const d = JSON.parse(ev.data);
      const tr = shown.get(d.row.id);
      if (tr) update(tr, d.row); else if (d.added) soon();
    });
    es.addEventListener("removed", (ev) => { if (shown.has(JSON.parse(ev.data).id)) soon(); });
    es.addEventListener("counts", (ev) => setCounts(JSON.parse(ev.data)));
    es.addEventListener("resync", () => refresh());
    es.addEventListener("root", (ev) => {
      const d = JSON.parse(ev.data);
      problem.hidden = !d.error; problem.textContent = d.error;
    });
  }
  setInterval(() => {
    const now = Date.now();
    for (const td of document.querySelectorAll("td.age[data-at]")) {
      if (td.dataset.at) td.textContent = fmtAge(now - Date.parse(td.dataset.at));
    }
    for (const span of document.querySelectorAll("span.due")) span.textContent = dueText(span, now);
  }, 5000);
  for (const sel of document.querySelectorAll("#filters select")) {
    sel.addEventListener("change", () => sel.form.submit());
  }
  // After the load event: a stream opened before it would keep the page loading.
  if (document.readyState === "complete") connect(); else window.addEventListener("load", connect);
})();
