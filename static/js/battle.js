// Battle page: stream both answers over one WebSocket, then let the server
// render the finished side and the controls (one source of truth: the server).
(function () {
  "use strict";
  holdAnswers();
  shareHistory();
  copyButtons();
  const conversation = document.getElementById("conversation");
  if (!conversation) {
    document.body.addEventListener("htmx:beforeSwap", showErrors);
    return;
  }
  const battleId = conversation.dataset.battleId;
  const seqs = {};      // response id -> last sequence number applied
  const texts = {};     // response id -> the Markdown written so far
  const drawing = {};   // response id -> a render is scheduled for the next frame

  // The text so far, rendered as Markdown at most once a frame (the server's render replaces
  // it when the answer ends).
  function show(responseId, element, text) {
    texts[responseId] = text;
    if (drawing[responseId]) return;
    drawing[responseId] = true;
    requestAnimationFrame(function () {
      drawing[responseId] = false;
      if (window.ArenaMarkdown) window.ArenaMarkdown.render(element, texts[responseId]);
      else element.textContent = texts[responseId];
    });
  }
  let socket = null;
  let retryDelay = 500;

  // Whether an error answer is swapped at all is arena.js's call (every page); here, the one
  // that is goes into the page's #errors, and a success clears it.
  function showErrors(evt) {
    const status = evt.detail.xhr.status;
    if (status >= 400) {
      if (!evt.detail.shouldSwap) return;
      evt.detail.target = document.getElementById("errors");
      evt.detail.swapOverride = "innerHTML";
    } else if (evt.detail.target && evt.detail.target.id !== "errors") {
      const errors = document.getElementById("errors");
      if (errors) errors.innerHTML = "";
    }
  }
  document.body.addEventListener("htmx:beforeSwap", showErrors);

  function pending() {
    return conversation.querySelectorAll('.side[data-status="pending"], .side[data-status="running"]');
  }

  function sideFor(responseId) {
    return conversation.querySelector('.side[data-response-id="' + responseId + '"]');
  }

  function scrollToEnd() {
    const nearBottom = window.innerHeight + window.scrollY >= document.body.scrollHeight - 200;
    if (nearBottom) window.scrollTo(0, document.body.scrollHeight);
  }

  function isPending(side) {
    return side.dataset.status === "pending" || side.dataset.status === "running";
  }

  function refreshControls() {
    const controls = document.getElementById("controls");
    htmx.ajax("GET", controls.dataset.controlsUrl,
              { source: controls, target: controls, swap: "innerHTML" });
  }

  // Each request names its own source element: htmx runs one request per source and keeps
  // only the last one queued behind it, so with the body as the shared source a side that
  // finished together with the other one was never swapped for its rendered answer.
  // The controls change only once nothing is pending, so they are fetched once, then:
  // a second fetch could replace a follow-up the person had started typing.
  let refreshing = 0;
  function refresh(side, status) {
    side.dataset.status = status;
    refreshing += 1;
    function settled() {
      refreshing -= 1;
      if (refreshing || pending().length) return;
      refreshControls();
      if (socket) socket.close(1000);
    }
    htmx.ajax("GET", side.dataset.sideUrl, { source: side, target: side, swap: "outerHTML" })
      .then(settled, settled);
  }

  // An unfinished answer the page hears nothing of for a while (data-quiet-ms) gets a word:
  // the workers may be busy or restarting; the answer is kept and the page keeps listening.
  const QUIET_NOTICE = "No word from the workers for a while: they may be busy or " +
    "restarting. This answer is kept and will appear here; you can also leave and come back.";
  const heard = {};  // response id -> when the page last heard of it
  // Its end the page asks the server for, every few seconds of quiet: an end event is lost
  // when Redis fails at that moment, while the socket waits the failure out.
  const CHECK_QUIET_MS = 5000;
  const checked = {};  // response id -> when the page last asked
  setInterval(function () {
    const quietMs = Number(conversation.dataset.quietMs) || 20000;
    pending().forEach(function (side) {
      const id = side.dataset.responseId;
      if (!(id in heard)) heard[id] = Date.now();
      const now = Date.now();
      if (now - heard[id] >= CHECK_QUIET_MS && now - (checked[id] || 0) >= CHECK_QUIET_MS) {
        checked[id] = now;
        checkFinished(side);
      }
      const notice = side.querySelector(".step-notice");
      if (notice && !notice.textContent && Date.now() - heard[id] >= quietMs) {
        notice.textContent = QUIET_NOTICE;
        notice.dataset.quiet = "1";
      }
    });
  }, 1000);

  function onMessage(event) {
    const msg = JSON.parse(event.data);
    const side = sideFor(msg.response);
    if (!side) return;
    heard[msg.response] = Date.now();
    const quiet = side.querySelector('.step-notice[data-quiet="1"]');
    if (quiet) { quiet.textContent = ""; delete quiet.dataset.quiet; }
    const textEl = side.querySelector(".stream-text");
    const last = seqs[msg.response] || 0;
    if (msg.event === "snapshot") {
      if (msg.seq >= last && textEl) { show(msg.response, textEl, msg.text); seqs[msg.response] = msg.seq; }
    } else if (msg.event === "delta") {
      if (msg.seq <= last || !textEl) return;
      show(msg.response, textEl, (texts[msg.response] || "") + msg.text);
      seqs[msg.response] = msg.seq;
      side.dataset.status = "running";
      scrollToEnd();
    } else if (msg.event === "restart") {
      // From the sweep (seq 0: its worker stopped, a notice says so) or a retried attempt.
      const notice = side.querySelector(".step-notice");
      if (notice) notice.textContent = msg.notice || "";
      if ((msg.seq && msg.seq <= last) || !textEl) return;
      show(msg.response, textEl, "");
      if (msg.seq) seqs[msg.response] = msg.seq;
    } else if (msg.event === "done" || msg.event === "failed") {
      if (isPending(side)) refresh(side, msg.event);
    }
  }

  function connect() {
    if (socket || !pending().length) return;
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    socket = new WebSocket(scheme + location.host + "/ws/battles/" + battleId + "/");
    socket.addEventListener("open", function () {
      retryDelay = 500;
      // An answer that finished before the socket joined the battle sends no event any more.
      pending().forEach(checkFinished);
    });
    socket.addEventListener("message", onMessage);
    socket.addEventListener("close", function () {
      socket = null;
      if (pending().length) {
        // Reconnect; anything finished meanwhile is fetched from the server.
        pending().forEach(function (side) { checkFinished(side); });
        setTimeout(connect, retryDelay);
        retryDelay = Math.min(retryDelay * 2, 8000);
      }
    });
  }

  // Swapped in through htmx (refresh), so that a failed side's Retry button works.
  function checkFinished(side) {
    fetch(side.dataset.sideUrl, { headers: { "HX-Request": "true" } })
      .then(function (r) { return r.ok ? r.text() : ""; })
      .then(function (html) {
        const finished = /^\s*<div class="side[^>]*data-status="(done|failed)"/.exec(html);
        if (finished && side.isConnected && isPending(side)) refresh(side, finished[1]);
      })
      .catch(function () { /* the next reconnect checks again */ });
  }

  // Keys 1-4 vote (in the order of the buttons) once voting is open, unless the person is
  // typing; Escape stops the answers being written; after the vote, focus goes to the way
  // forward.
  document.addEventListener("keydown", function (evt) {
    if (evt.ctrlKey || evt.metaKey || evt.altKey || evt.repeat) return;
    const target = evt.target;
    if (evt.key !== "Escape" && target.closest &&
        target.closest("input, textarea, select, [contenteditable]")) return;
    const button = document.querySelector('#controls button[aria-keyshortcuts="' + evt.key + '"]');
    if (button && !button.disabled) { evt.preventDefault(); button.click(); }
  });
  document.body.addEventListener("htmx:afterSwap", function (evt) {
    if (evt.detail.target && evt.detail.target.id === "reveal-slot") {
      const next = document.getElementById("next-prompt") ||
        document.querySelector('[data-testid="new-battle-after"]');
      if (next) next.focus();
    }
  });

  // A stop (or anything else) that finished every side leaves the socket nothing to carry.
  document.body.addEventListener("htmx:afterSwap", function () {
    if (socket && !pending().length && !refreshing) socket.close(1000);
    connect();
    scrollToEnd();
  });
  connect();

  // A stop keeps the text Redis held. Right after Redis restarted empty, before the writer
  // wrote it again, that is less than this page had shown: the writer then gives the answer
  // back what it had sent (battles.services.stopped_answer_keep_written), and the page asks
  // for the side again until it has it: after 1 s, 2 s, 4 s ... for about a minute.
  const STOP_RECHECK_MS = [1000, 2000, 4000, 8000, 16000, 32000];
  const stopRechecks = {};  // response id -> asks made
  const stopRecheckAt = {};  // response id -> the next ask is scheduled
  function keepWhatWasShown() {
    conversation.querySelectorAll('.side[data-status="done"]').forEach(function (side) {
      const id = side.dataset.responseId;
      const shown = texts[id];
      const raw = side.querySelector("template.raw-answer");
      if (!shown || !raw || !side.querySelector('.cut-note[data-testid^="stopped-"]')) return;
      const saved = raw.content.textContent;
      if (saved.length >= shown.length || !shown.startsWith(saved)) {
        delete texts[id];
        return;
      }
      const asked = stopRechecks[id] || 0;
      if (stopRecheckAt[id] || asked >= STOP_RECHECK_MS.length) return;
      stopRechecks[id] = asked + 1;
      stopRecheckAt[id] = setTimeout(function () {
        delete stopRecheckAt[id];
        htmx.ajax("GET", side.dataset.sideUrl, { target: "#side-" + id, swap: "outerHTML" });
      }, STOP_RECHECK_MS[asked]);
    });
  }
  document.body.addEventListener("htmx:afterSettle", keepWhatWasShown);

  // Done text is no longer busy: screen readers read the finished answer once.
  document.body.addEventListener("htmx:afterSettle", function () {
    conversation.querySelectorAll('.side[data-status="done"] .stream-text')
      .forEach(function (el) { el.setAttribute("aria-busy", "false"); });
  });

  // The sidebar refreshes itself on "arena-history" (sent by the server with every change);
  // the visitor's other tabs hear of it, and of any battle page opened, through a
  // BroadcastChannel and refresh theirs.
  function shareHistory() {
    if (!("BroadcastChannel" in window)) return;
    const channel = new BroadcastChannel("arena-history");
    channel.addEventListener("message", function () {
      htmx.trigger(document.body, "arena-history-elsewhere");
    });
    document.body.addEventListener("arena-history", function () { channel.postMessage("changed"); });
    if (document.getElementById("conversation")) channel.postMessage("opened");
  }

  // A share link's Copy button (data-copy: the id of the field to copy); says it was copied.
  function copyButtons() {
    document.addEventListener("click", function (evt) {
      const button = evt.target.closest && evt.target.closest("button[data-copy]");
      const field = button && document.getElementById(button.dataset.copy);
      if (!field) return;
      function copied() { button.textContent = "Copied"; }
      field.select();
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(field.value).then(copied, function () { /* selected */ });
      } else if (document.execCommand("copy")) {
        copied();
      }
    });
  }

  // "Show both answers together": a choice kept in this browser.
  function holdAnswers() {
    const box = document.getElementById("hold-answers");
    if (!box) return;
    const KEY = "arena-hold-answers";
    function apply() { document.body.classList.toggle("hold-answers", box.checked); }
    try { box.checked = localStorage.getItem(KEY) === "1"; } catch (e) { /* private mode */ }
    apply();
    box.addEventListener("change", function () {
      try { localStorage.setItem(KEY, box.checked ? "1" : "0"); } catch (e) { /* this page only */ }
      apply();
    });
  }
})();
