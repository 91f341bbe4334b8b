// Copy buttons: a progressive enhancement. Without this script every value
// stays visible and selectable; with it, the hidden buttons appear and copy
// the text of the element named by data-copy-target.
(function () {
  "use strict";

  function announce(message) {
    var status = document.getElementById("copy-status");
    if (status) {
      status.textContent = message;
    }
  }

  function fallbackCopy(text) {
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.className = "copy-scratch";
    document.body.appendChild(area);
    area.select();
    var ok = false;
    try {
      ok = document.execCommand("copy");
    } catch (e) {
      ok = false;
    }
    document.body.removeChild(area);
    return ok ? Promise.resolve() : Promise.reject(new Error("copy refused"));
  }

  function copy(text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text).catch(function () {
        return fallbackCopy(text);
      });
    }
    return fallbackCopy(text);
  }

  function enhance(button) {
    var target = document.getElementById(button.getAttribute("data-copy-target"));
    if (!target) {
      return;
    }
    var label = button.textContent;
    button.hidden = false;
    button.addEventListener("click", function () {
      var text = target.textContent.trim();
      copy(text).then(function () {
        button.textContent = "Copied";
        button.setAttribute("data-copied", "true");
        announce("Copied to the clipboard.");
      }, function () {
        button.textContent = "Select and copy";
        announce("Copying failed: select the text and copy it by hand.");
      });
      window.setTimeout(function () {
        button.textContent = label;
        button.removeAttribute("data-copied");
      }, 2000);
    });
  }

  function init() {
    var buttons = document.querySelectorAll("button[data-copy-target]");
    for (var i = 0; i < buttons.length; i++) {
      enhance(buttons[i]);
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
