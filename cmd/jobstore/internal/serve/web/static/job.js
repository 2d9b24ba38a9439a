// jobstore serve: keeps a job's page current: its status from the server's
// events, its output by reading the logs on from where the page ends.
// Everything a job's submitter or runner wrote is set as text, never markup.
"use strict";
(function () {
  const id = document.body.dataset.id;
  const live = document.getElementById("live");
  const maxShown = 512 * 1024; // characters of a log kept on the page
  let state = document.body.dataset.state;

  function pct(p) { return p == null ? "-" : Math.floor(p * 100 + 1e-9) + "%"; }
  function connect() {
    const es = new EventSource("/events?job=" + encodeURIComponent(id));
    es.onopen = () => { live.dataset.state = "live"; live.textContent = "live"; };
    es.onerror = () => { live.dataset.state = "down"; live.textContent = "reconnecting…"; };
    es.addEventListener("job", (ev) => {
      const row = JSON.parse(ev.data).row;
      document.getElementById("summary").className = "summary st-" + row.state;
      document.getElementById("state").textContent = row.state;
      document.getElementById("note").textContent = row.note;
      const bar = document.getElementById("bar");
      bar.value = row.progress == null ? 0 : row.progress; // unknown: empty, not the indeterminate animation
      document.getElementById("pct").textContent = pct(row.progress);
      document.getElementById("message").textContent = row.error || row.message;
      if (row.state !== state) {
        state = row.state;
        // Fields and actions change with the state; the back link stays.
        const back = document.getElementById("back").getAttribute("href");
        setTimeout(() => location.replace(location.pathname + "?back=" + encodeURIComponent(back)), 300);
      }
    });
    es.addEventListener("removed", () => {
      live.dataset.state = "down"; live.textContent = "this job was removed";
      es.close();
    });
  }
  function follow(pre) {
    let next = Number(pre.dataset.next || "0");
    let ended = false;
    async function poll() {
      let more = false;
      try {
        const res = await fetch("/jobs/" + encodeURIComponent(id) + "/log?name=" + pre.dataset.name + "&from=" + next,
          { credentials: "same-origin" });
        if (!res.ok) return;
        const c = await res.json();
        if (c.error) return;
        if (c.gap) {
          const g = document.createElement("span");
          g.className = "gap"; g.textContent = "\n[… " + (c.start - next) + " bytes not shown …]\n";
          pre.appendChild(g);
        }
        if (c.text) {
          const atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
          pre.appendChild(document.createTextNode(c.text));
          while (pre.textContent.length > maxShown && pre.firstChild) pre.removeChild(pre.firstChild);
          if (atEnd) pre.scrollTop = pre.scrollHeight;
        }
        more = c.next < c.size;
        next = c.next;
        if (c.ended && !more) { ended = true; return; }
      } finally {
        if (!ended) setTimeout(poll, more ? 0 : 1000);
      }
    }
    poll();
  }
  function start() {
    for (const pre of document.querySelectorAll("pre.out")) {
      if (!pre.dataset.error) follow(pre);
    }
    connect();
  }
  // After the load event: a stream opened before it would keep the page loading.
  if (document.readyState === "complete") start(); else window.addEventListener("load", start);
})();
