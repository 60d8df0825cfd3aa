// A scripted language model for Toolbelt's end-to-end tests (test/e2e/agent.e2e.mjs). Copilot's
// agent mode sends it every request; it answers from the script the prompt names
// ("scenario:NAME", see scenarios.js): one tool call per round, then a text answer quoting what the
// tools returned. Every request is appended as one JSON line to the file TOOLBELT_AGENT_RECORD
// names: the tools offered with their schemas as Copilot sent them, the tool results and the reply
// (not the system prompt or the user's context), which the test reads back.
const fs = require('node:fs');
const vscode = require('vscode');
const { scenarios } = require('./scenarios');

const VENDOR = 'toolbelt-scripted';
const MODEL = {
	id: 'scripted',
	name: 'Scripted Model',
	family: 'scripted',
	version: '1',
	// Large enough that Copilot never summarizes the conversation to fit it.
	maxInputTokens: 400_000,
	maxOutputTokens: 16_000,
	capabilities: { toolCalling: true, imageInput: false },
};

const COPILOT_CHAT = 'GitHub.copilot-chat';

function activate(context) {
	context.subscriptions.push(vscode.lm.registerLanguageModelChatProvider(VENDOR, {
		provideLanguageModelChatInformation: () => [MODEL],
		provideLanguageModelChatResponse: respond,
		// Copilot budgets its prompt with this; an estimate is all it needs.
		provideTokenCount: (_model, input) => Math.ceil(JSON.stringify(typeof input === 'string' ? input : input.content ?? '').length / 4),
	}));
	reportWhenCopilotIsActive(context);
}

/**
 * Until Copilot Chat has activated (it starts switched off in a fresh profile), a prompt goes to
 * VS Code's setup agent, which asks to sign in. The test waits for this line before its first prompt.
 */
function reportWhenCopilotIsActive(context) {
	const check = async () => {
		const copilot = vscode.extensions.getExtension(COPILOT_CHAT);
		if (!copilot) return false;
		await copilot.activate();
		record({ kind: 'ready', copilotChat: copilot.packageJSON.version });
		return true;
	};
	check().then(done => {
		if (done) return;
		const listener = vscode.extensions.onDidChange(() => check().then(found => found && listener.dispose()));
		context.subscriptions.push(listener);
	});
}

async function respond(_model, messages, options, progress) {
	const conversation = readConversation(messages);
	const tools = (options.tools ?? []).map(tool => ({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema }));
	const entry = { kind: 'request', at: new Date().toISOString(), scenario: conversation.scenario, round: conversation.results.length, tools, results: conversation.results };
	const reply = nextReply(conversation, new Set(tools.map(tool => tool.name)));
	entry.reply = reply;
	record(entry);
	if (reply.call) {
		progress.report(new vscode.LanguageModelToolCallPart(reply.call.callId, reply.call.name, reply.call.input));
	} else {
		progress.report(new vscode.LanguageModelTextPart(reply.text));
	}
}

/**
 * The scenario named by the latest user message that names one, and the tool results that came
 * after it (in order, each with the name of the call it answers). Copilot wraps the prompt in
 * its own context, so the name is searched for, not compared.
 */
function readConversation(messages) {
	let scenario;
	let start = -1;
	messages.forEach((message, index) => {
		if (message.role !== vscode.LanguageModelChatMessageRole.User) return;
		const named = [...textOf(message).matchAll(/scenario:([\w-]+)/g)].pop();
		if (named) {
			scenario = named[1];
			start = index;
		}
	});
	const callNames = new Map();
	const results = [];
	for (const message of messages.slice(start + 1)) {
		for (const part of message.content) {
			if (part instanceof vscode.LanguageModelToolCallPart) callNames.set(part.callId, part.name);
			else if (part instanceof vscode.LanguageModelToolResultPart) {
				results.push({ callId: part.callId, name: callNames.get(part.callId), text: part.content.map(piece => piece.value ?? '').join('') });
			}
		}
	}
	return { scenario, results };
}

function textOf(message) {
	return message.content.map(part => (part instanceof vscode.LanguageModelTextPart ? part.value : '')).join('');
}

/** The next tool call of the script, or its closing answer; requests without a scenario (chat titles and the like) get a plain line. */
function nextReply({ scenario, results }, offered) {
	const script = scenario && scenarios[scenario];
	if (!script) return { text: scenario ? `Scripted model: there is no scenario "${scenario}".` : 'Scripted chat' };
	try {
		const step = nextStep(script.calls, results);
		if (!step) return { text: closingAnswer(scenario, results) };
		if (!offered.has(step.tool)) return { text: `Scripted model: ${step.tool} was not offered (offered: ${[...offered].join(', ')}).` };
		const input = typeof step.input === 'function' ? step.input(results) : step.input;
		return { call: { callId: `scripted-${scenario}-${results.length}-${Date.now()}`, name: step.tool, input } };
	} catch (error) {
		return { text: `Scripted model: scenario "${scenario}" failed at round ${results.length}: ${error.message}` };
	}
}

/**
 * The step that comes after `results`: each result answers the step in turn, except that a step with
 * `retry` is called again while its latest result matches (up to `retry.attempts` calls).
 */
function nextStep(calls, results) {
	let index = 0;
	let calledTimes = 0;
	for (const result of results) {
		const retry = calls[index]?.retry;
		calledTimes++;
		if (retry && calledTimes < retry.attempts && retry.while(result.text)) continue;
		index++;
		calledTimes = 0;
	}
	return calls[index];
}

/** Each tool's result (its first lines), so the chat shows what the model received. */
function closingAnswer(scenario, results) {
	return [`Scenario ${scenario}: the tools returned`, ...results.map(result => `- ${result.name}: ${result.text.split('\n').slice(0, 3).join(' ⏎ ')}`)].join('\n');
}

function record(entry) {
	const file = process.env.TOOLBELT_AGENT_RECORD;
	if (file) fs.appendFileSync(file, `${JSON.stringify(entry)}\n`);
}

module.exports = { activate };
