// Debate page: the debate's socket streams the speech being written into its box and says
// when a step was committed; the page then re-reads its body from the server (one source of
// truth; the vote form is hx-preserve'd, so a wager being typed survives a refresh). The
// socket closes once the debate is over.
(function () {
  "use strict";
  let socket = null;
  let retryDelay = 500;
  let inFlight = false;
  let dirty = false;
  // Re-read after a few seconds without news (arena.js); each message is news.
  const heard = arenaRereadWhenQuiet(function () { return live(); }, function () { refresh(); });
  const texts = {};  // step id -> text streamed so far
  const seqs = {};   // step id -> last sequence number applied

  function body() { return document.getElementById("debate-body"); }
  function live() { const b = body(); return b && b.dataset.socket ? b : null; }

  function refresh() {
    const b = body();
    if (!b) return;
    if (inFlight) { dirty = true; return; }
    inFlight = true;
    dirty = false;
    function settled() { inFlight = false; if (dirty) refresh(); }
    htmx.ajax("GET", b.dataset.liveUrl, { source: b, target: b, swap: "outerHTML" })
      .then(settled, settled);
  }

  // The reply as written: its <reflection>/<critique>/<speech> tags become plain headings.
  function readable(text) {
    return text.replace(/<\/?(reflection|critique|speech)\s*>/gi, function (tag, name) {
      return tag.charAt(1) === "/" ? "\n" : "\n[" + name.toUpperCase() + "]\n";
    }).trim();
  }

  function show(step) {
    const box = document.querySelector('[data-stream-step="' + step + '"]');
    if (box) box.textContent = readable(texts[step] || "");
  }

  // Where the debate stands (currentRound, currentSpeaker), from a "progress" or "changed"
  // message: shown at once, before the body is re-read.
  function showProgress(message) {
    const line = document.querySelector('[data-testid="progress"]');
    if (!line || line.hidden || message.currentRound === undefined) return;
    line.dataset.currentRound = message.currentRound;
    line.dataset.currentSpeaker = message.currentSpeaker || "";
    const text = message.currentRound
      ? "Round " + message.currentRound + " of " + line.dataset.rounds
      : "Round 1 of " + line.dataset.rounds + " about to start";
    line.textContent = text;
    if (message.currentSpeaker) {
      const who = document.createElement("strong");
      who.textContent = message.currentSpeaker.toUpperCase();
      line.append(" \u00b7 ", who, " speaking");
    }
  }

  function onMessage(message) {
    const step = message.step;
    if (message.event === "progress") { showProgress(message); return; }
    if (message.event === "delta" || message.event === "snapshot") {
      if (seqs[step] !== undefined && message.seq <= seqs[step]) return;
      texts[step] = message.event === "snapshot" ? message.text : (texts[step] || "") + message.text;
      seqs[step] = message.seq;
      show(step);
      if (!document.querySelector('[data-stream-step="' + step + '"]')) refresh();
    } else if (message.event === "restart") {
      texts[step] = "";
      seqs[step] = message.seq;
      show(step);
    } else {
      showProgress(message);
      refresh();  // "changed", "done", "failed"
    }
  }

  function connect() {
    if (!live()) { if (socket) socket.close(1000); return; }
    if (socket) return;
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    socket = new WebSocket(scheme + location.host + live().dataset.socket);
    socket.addEventListener("open", function () { retryDelay = 500; refresh(); });
    socket.addEventListener("message", function (event) {
      heard();
      onMessage(JSON.parse(event.data));
    });
    socket.addEventListener("close", function () {
      socket = null;
      if (live()) { setTimeout(connect, retryDelay); retryDelay = Math.min(retryDelay * 2, 8000); }
    });
  }

  document.body.addEventListener("htmx:afterSettle", function () {
    Object.keys(texts).forEach(show);
    connect();
  });
  connect();
})();
