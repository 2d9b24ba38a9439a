// jobstore serve: keeps the summary by kind current: loads /api/kinds
// again every few seconds and rebuilds the lines from it. Kinds are set as
// text, never markup; the bars are numbers the server computed.
"use strict";
(function () {
  const tbody = document.getElementById("kind-rows");
  const live = document.getElementById("live");
  const problem = document.getElementById("problem");
  const empty = document.getElementById("empty");
  const svgNS = "http://www.w3.org/2000/svg";
  const every = 5000; // ms between loads

  function el(name, cls, text) {
    const e = document.createElement(name);
    if (cls) e.className = cls;
    if (text != null) e.textContent = text;
    return e;
  }
  function svg(name, attrs) {
    const e = document.createElementNS(svgNS, name);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
    return e;
  }
  function line(l, page) {
    const tr = el("tr", l.kind ? "" : "all");
    tr.dataset.kind = l.kind;
    const kind = el("td", "kind"); kind.dataset.label = "kind";
    if (l.kind) {
      const a = el("a", "", l.kind);
      a.href = "/?" + new URLSearchParams({ kind: l.kind }).toString();
      kind.appendChild(a);
    } else kind.textContent = "every kind";
    tr.appendChild(kind);
    for (const s of page.states) {
      const n = l.counts[s] || 0;
      const td = el("td", "num st-" + s, String(n));
      td.dataset.label = s; td.dataset.state = s;
      if (!n) td.dataset.zero = "1";
      tr.appendChild(td);
    }
    const sp = el("td", "spark"); sp.dataset.label = "last hour";
    const chart = svg("svg", { class: "spark", viewBox: "0 0 " + page.width + " " + page.height, width: page.width, height: page.height, role: "img",
      "aria-label": l.ended_sum + " ended, " + l.failed_sum + " failed or lost in the last hour" });
    for (const b of l.bars) {
      const g = svg("g", {});
      const title = svg("title", {}); title.textContent = b.title; g.appendChild(title);
      g.appendChild(svg("rect", { class: "ended", x: b.x, y: b.y, width: b.w, height: b.h }));
      g.appendChild(svg("rect", { class: "failed", x: b.x, y: b.fy, width: b.w, height: b.fh }));
      chart.appendChild(g);
    }
    sp.appendChild(chart);
    sp.appendChild(document.createTextNode(" "));
    const sums = el("span", "sums");
    sums.append(el("b", "ended-sum", String(l.ended_sum)), " ended, ", el("b", "failed-sum", String(l.failed_sum)), " failed");
    sp.appendChild(sums);
    tr.appendChild(sp);
    return tr;
  }
  async function refresh() {
    try {
      const res = await fetch("/api/kinds", { credentials: "same-origin" });
      if (!res.ok) throw new Error("HTTP " + res.status);
      const page = await res.json();
      const frag = document.createDocumentFragment();
      frag.appendChild(line(page.all, page));
      for (const l of page.kinds) frag.appendChild(line(l, page));
      tbody.replaceChildren(frag);
      empty.hidden = page.kinds.length > 0;
      problem.hidden = !page.error; problem.textContent = page.error;
      live.dataset.state = "live"; live.textContent = "live";
    } catch (e) {
      live.dataset.state = "down"; live.textContent = "cannot load the summary: " + e.message;
    }
  }
  setInterval(refresh, every);
})();
