// The human check (Cloudflare Turnstile), loaded only when it is on: a vote the server
// answers with 428 shows the widget; once passed, the same vote is sent again with the
// token as the X-Turnstile-Token header (a script asks window.arenaHumanCheck() for it).
// Nothing of the vote was recorded before: the choice stays.
(function () {
  "use strict";

  const box = document.getElementById("human-check");
  if (!box) return;
  let waiting = null;  // the promise of the token being asked for

  // A token from the widget (shown until it is passed); one at a time.
  window.arenaHumanCheck = function () {
    if (waiting) return waiting;
    waiting = new Promise(function (resolve, reject) {
      if (!window.turnstile) {
        waiting = null;
        reject(new Error("The human check could not load: reload the page and try again."));
        return;
      }
      box.hidden = false;
      box.scrollIntoView({ block: "nearest" });
      const place = box.querySelector(".human-check-widget");
      place.replaceChildren();
      window.turnstile.render(place, {
        sitekey: box.dataset.siteKey,
        callback: function (token) { box.hidden = true; waiting = null; resolve(token); },
        "error-callback": function () { waiting = null; reject(new Error("The human check failed: try again.")); },
      });
    });
    return waiting;
  };

  // An htmx request (a form, or a button with its own hx-post) answered 428: ask, then send
  // the same request again, with the token as a header.
  document.body.addEventListener("htmx:afterRequest", function (evt) {
    const elt = evt.detail.elt;
    if (!evt.detail.xhr || evt.detail.xhr.status !== 428 || !elt || !elt.matches) return;
    window.arenaHumanCheck().then(function (token) {
      function withToken(configEvt) {
        if (configEvt.detail.elt !== elt) return;
        document.body.removeEventListener("htmx:configRequest", withToken);
        configEvt.detail.headers["X-Turnstile-Token"] = token;
      }
      document.body.addEventListener("htmx:configRequest", withToken);
      if (elt.matches("form")) elt.requestSubmit(); else elt.click();
    }).catch(function () { /* the error is on the page already */ });
  });
})();
