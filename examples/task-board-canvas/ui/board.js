// Task board canvas. Reads the workspace's tasks through the relative Kandev protocol
// (./_kandev/v1) and draws one column per task state. No data is stored by the app.

const TASKS_URL = "./_kandev/v1/data/tasks";

const statusEl = document.getElementById("status");
const boardEl = document.getElementById("board");

// groupByState returns [state, tasks] pairs in first-seen order.
function groupByState(tasks) {
  const groups = new Map();
  for (const task of tasks) {
    const state = task.state || "unknown";
    if (!groups.has(state)) groups.set(state, []);
    groups.get(state).push(task);
  }
  return [...groups.entries()];
}

function column(state, tasks) {
  const col = document.createElement("div");
  col.className = "column";
  const heading = document.createElement("h2");
  heading.textContent = `${state} (${tasks.length})`;
  col.append(heading);
  const list = document.createElement("ul");
  for (const task of tasks) {
    const item = document.createElement("li");
    item.textContent = task.title || task.id || "Untitled task";
    list.append(item);
  }
  col.append(list);
  return col;
}

async function load() {
  statusEl.textContent = "Loading tasks…";
  try {
    const res = await fetch(TASKS_URL, { credentials: "omit", cache: "no-store" });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    const body = await res.json();
    const tasks = Array.isArray(body.items) ? body.items : [];
    boardEl.replaceChildren(...groupByState(tasks).map(([state, list]) => column(state, list)));
    statusEl.textContent = tasks.length === 0 ? "No tasks in this workspace yet." : `${tasks.length} tasks`;
  } catch (err) {
    statusEl.textContent = `Could not load tasks: ${err.message}`;
  }
}

document.getElementById("refresh").addEventListener("click", load);
load();
