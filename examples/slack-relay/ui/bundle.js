// Slack Relay: native UI bundle. A plain ES module with no build step; the host imports it
// and calls the function registered below with its registry and host objects.

const PLUGIN_ID = "slack-relay";
const PAGE_PATH = "/slack-relay";

// testConnection calls the workspace-scoped connection.test action declared in manifest.yaml
// and returns a short status the page can show.
async function testConnection(host) {
  const url = `/api/plugins/${PLUGIN_ID}/actions/connection.test`;
  try {
    const res = await host.api.fetch(url, { method: "POST", body: JSON.stringify({}) });
    if (!res.ok) {
      return { state: "error", text: `Slack check failed (HTTP ${res.status})` };
    }
    return { state: "ok", text: "Connected to Slack" };
  } catch (err) {
    return { state: "error", text: `Slack check failed: ${err && err.message ? err.message : err}` };
  }
}

function makePage(host) {
  const h = host.jsx;
  const { Button, Card, CardContent, CardDescription, CardHeader, CardTitle } = host.ui;

  return function SlackRelayPage() {
    const [status, setStatus] = host.React.useState({ state: "idle", text: "Not checked yet" });
    const onCheck = async () => {
      setStatus({ state: "idle", text: "Checking…" });
      setStatus(await testConnection(host));
    };
    return h(
      "div",
      { className: "slack-relay-page" },
      h(
        Card,
        null,
        h(
          CardHeader,
          null,
          h(CardTitle, null, "Slack Relay"),
          h(CardDescription, null, "Task comments go to the linked Slack thread; replies come back."),
        ),
        h(
          CardContent,
          null,
          h("p", { className: "slack-relay-status", "data-state": status.state }, status.text),
          h(Button, { type: "button", variant: "outline", size: "sm", onClick: onCheck }, "Check connection"),
        ),
      ),
    );
  };
}

window.registerKandevPlugin(PLUGIN_ID, {
  initialize(registry, host) {
    registry.registerNavItem({ id: PLUGIN_ID, label: "Slack Relay", path: PAGE_PATH, icon: "puzzle", section: "main" });
    registry.registerRoute(PAGE_PATH, makePage(host));
    // The shortcut itself is declared in manifest.yaml (ui.keybindings); older hosts have no
    // registerKeybinding, and the page is still reachable from the nav item there.
    if (typeof registry.registerKeybinding === "function") {
      registry.registerKeybinding("open-relay", () => host.navigate(PAGE_PATH));
    }
  },
  destroy() {},
});
