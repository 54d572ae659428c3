// Every page: what the server answers with an error status is shown where the person acted,
// and a request that fails on the way says so. Nothing typed is lost either way: htmx never
// replaces the form that sent the request.
(function () {
  "use strict";

  function notice(message) {
    const box = document.createElement("div");
    box.className = "alert error";
    box.setAttribute("role", "alert");
    box.dataset.testid = "error";
    box.textContent = message;
    return box;
  }

  // Where a message with no place of its own goes: the page's #errors, else the top of <main>.
  function show(message) {
    let errors = document.getElementById("errors");
    if (!errors) {
      errors = document.createElement("div");
      errors.id = "errors";
      errors.setAttribute("aria-live", "polite");
      document.querySelector("main").prepend(errors);
    }
    errors.replaceChildren(notice(message));
    errors.scrollIntoView({ block: "nearest" });
  }

  document.body.addEventListener("htmx:beforeSwap", function (evt) {
    const status = evt.detail.xhr.status;
    if (status < 400) return;
    evt.detail.isError = false;
    // The arena answers an htmx request with a fragment made for its target (the error
    // partial, or the live section with the error in it); anything else (a bare 500 page
    // from a proxy or the framework) is not for swapping: say what happened instead.
    if (/^\s*<!doctype/i.test(evt.detail.serverResponse || "") || !evt.detail.serverResponse) {
      evt.detail.shouldSwap = false;
      show("The server could not do that (HTTP " + status + "). Nothing you typed was lost: " +
           "try again in a moment.");
    } else {
      evt.detail.shouldSwap = true;
    }
  });

  function unreachable() {
    show("The arena could not be reached. Nothing you typed was lost: check the connection " +
         "and try again.");
  }
  document.body.addEventListener("htmx:sendError", unreachable);
  document.body.addEventListener("htmx:timeout", unreachable);

  // A form marked data-reset-on-success empties once the server took it (no inline handler:
  // the Content-Security-Policy allows no eval, so htmx's hx-on is off).
  document.body.addEventListener("htmx:afterRequest", function (evt) {
    const form = evt.detail.elt;
    if (evt.detail.successful && form.matches && form.matches("form[data-reset-on-success]")) {
      form.reset();
    }
  });

  // A text box with data-max-chars counts what is typed against the server's limit and
  // refuses to send more (a maxlength attribute would cut a paste without a word).
  const numbers = new Intl.NumberFormat();
  function count(box) {
    const limit = Number(box.dataset.maxChars);
    if (!(limit > 0)) return;
    const length = box.value.length;
    const over = length - limit;
    const counter = document.querySelector('.char-count[data-for="' + box.id + '"]');
    if (counter) {
      counter.textContent = over > 0
        ? numbers.format(over) + " characters over the limit of " + numbers.format(limit) +
          ": shorten it to send"
        : numbers.format(length) + " / " + numbers.format(limit) + " characters";
      counter.classList.toggle("over", over > 0);
    }
    box.setCustomValidity(over > 0 ? "At most " + numbers.format(limit) + " characters." : "");
    if (box.form) {
      box.form.querySelectorAll('button[type="submit"]').forEach(function (button) {
        if (over > 0) { button.disabled = true; button.dataset.tooLong = "1"; }
        else if (button.dataset.tooLong) { button.disabled = false; delete button.dataset.tooLong; }
      });
    }
  }
  function countAll() { document.querySelectorAll("textarea[data-max-chars]").forEach(count); }
  document.body.addEventListener("input", function (evt) {
    if (evt.target.matches && evt.target.matches("textarea[data-max-chars]")) count(evt.target);
  });
  document.body.addEventListener("htmx:afterSettle", countAll);
  countAll();

  // In a box marked data-enter-sends, Enter (or Ctrl/Cmd+Enter) sends and Shift+Enter adds a
  // line; a composition in progress (an IME) is left alone.
  document.body.addEventListener("keydown", function (evt) {
    const box = evt.target;
    if (evt.key !== "Enter" || evt.shiftKey || evt.isComposing || evt.altKey) return;
    if (!(box.matches && box.matches("textarea[data-enter-sends]")) || !box.form) return;
    evt.preventDefault();
    const send = box.form.querySelector('button[type="submit"]');
    if (send && !send.disabled) box.form.requestSubmit(send);
  });
})();

// A live page that follows its socket (debate, panel): a "changed" lost while Redis failed
// (the socket waits the failure out) would leave it behind for good, so after a few seconds
// without news it reads itself again. Returns the function to call on each message.
function arenaRereadWhenQuiet(isLive, reread) {
  "use strict";
  const QUIET_MS = 5000;
  let heardAt = Date.now();
  setInterval(function () {
    if (isLive() && Date.now() - heardAt >= QUIET_MS) {
      heardAt = Date.now();
      reread();
    }
  }, 1000);
  return function () { heardAt = Date.now(); };
}
