package manifest

import "strings"

// knownSubjects are the bus subjects of the manifest reference's event vocabulary.
var knownSubjects = strings.Fields(`
task.created task.updated task.state_changed task.deleted task.moved task.tree_hold_created task.tree_hold_released
workspace.created workspace.updated workspace.deleted
workflow.created workflow.updated workflow.deleted
workflow_step.created workflow_step.updated workflow_step.deleted workflow.step_completion_signaled
message.added message.updated message.deleted message.queue.status_changed
task_session.state_changed
task_plan.created task_plan.updated task_plan.deleted task_plan.revision.created task_plan.reverted
task_walkthrough.created task_walkthrough.updated task_walkthrough.deleted
turn.started turn.completed
repository.created repository.updated repository.deleted repository.script.created repository.script.updated repository.script.deleted
executor.created executor.updated executor.deleted executor.profile.created executor.profile.updated executor.profile.deleted executor.prepare.progress executor.prepare.completed
user.settings.updated
system.job.update
environment.created environment.updated environment.deleted
agent_profile.created agent_profile.updated agent_profile.deleted
agent.started agent.running agent.boot_ready agent.ready agent.completed agent.failed agent.stopped agent.context_reset agent.acp_session_created agentctl.starting agentctl.ready agentctl.error
agent.stream agent.turn.message_saved
permission_request.received
clarification.answered clarification.primary_answered clarification.cancelled clarification.stale_dismissed
automation.triggered automation.run.created
github.pr_feedback github.pr_state_changed github.new_pr_to_review github.new_issue github.task_pr.updated github.task_ci_options.updated github.watch.event github.rate_limit.updated
gitlab.mr_feedback gitlab.mr_state_changed gitlab.new_mr_to_review gitlab.new_issue gitlab.task_mr.updated gitlab.watch.event
jira.new_issue linear.new_issue sentry.new_issue
office.agent.created office.agent.updated office.agent.status_changed office.skill.created office.skill.updated office.project.created office.project.updated office.approval.created office.approval.resolved office.comment.created office.cost.recorded office.run.queued office.run.processed office.run.event_appended office.routine.triggered office.inbox.item office.task.status_changed office.task.updated office.task.decision_recorded office.task.review_requested office.provider.health_changed office.route_attempt.appended office.routing.settings_updated
`)

// perSessionSubjects are published with one more segment (a session or run id).
var perSessionSubjects = strings.Fields(`
agent.stream permission_request.received git.event git.ws file.change.notified
shell.output shell.exit process.output process.status
context_window.updated available_commands.updated session_mode.changed agent_capabilities.updated
session_models.updated session_info.updated session_todos.updated session_prompt_usage.updated
office.run.event_appended
`)
