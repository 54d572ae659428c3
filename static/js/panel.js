// Panel page: while the models work, the panel's socket says when something was written
// (an answer, a judgement, a new stage) and the page re-reads its progress section from the
// server (one source of truth). The socket closes once the panel is finished or waits for
// the person's answers; a later swap that is live again reconnects.
(function () {
  "use strict";
  let socket = null;
  let retryDelay = 500;
  let inFlight = false;
  let dirty = false;
  // Re-read after a few seconds without news (arena.js); each message is news.
  const heard = arenaRereadWhenQuiet(function () { return live(); }, function () { refresh(); });

  function live() {
    const section = document.getElementById("progress");
    return section && section.dataset.socket ? section : null;
  }

  function refresh() {
    const section = live();
    if (!section) return;
    if (inFlight) { dirty = true; return; }
    inFlight = true;
    dirty = false;
    function settled() {
      inFlight = false;
      if (dirty) refresh();
    }
    htmx.ajax("GET", section.dataset.liveUrl, { source: section, target: section, swap: "outerHTML" })
      .then(settled, settled);
  }

  function connect() {
    const section = live();
    if (!section) {
      if (socket) socket.close(1000);
      return;
    }
    if (socket) return;
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    socket = new WebSocket(scheme + location.host + section.dataset.socket);
    socket.addEventListener("open", function () {
      retryDelay = 500;
      refresh();  // whatever was written before the socket joined
    });
    socket.addEventListener("message", function (event) {
      heard();
      if (JSON.parse(event.data).event === "changed") refresh();
    });
    socket.addEventListener("close", function () {
      socket = null;
      if (live()) {
        setTimeout(connect, retryDelay);
        retryDelay = Math.min(retryDelay * 2, 8000);
      }
    });
  }

  document.body.addEventListener("htmx:afterSettle", connect);
  connect();
})();
