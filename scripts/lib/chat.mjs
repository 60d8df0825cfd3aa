// Drives Copilot agent mode in the workbench the way a person does: the chat view, its tool
// confirmations and their allowances. Selectors are those of VS Code 1.139 (code-server 4.139.1),
// found by looking at the page; see shared/TESTING.md "Driving the real agent loop".
import { runCommand } from './workbench.mjs';

const CHAT = '.interactive-session';
/** Starting a new chat keeps the previous one in the page, hidden: only the shown one counts. */
const TRANSCRIPT = `${CHAT} .interactive-list:not([aria-hidden="true"])`;
const INPUT = `${CHAT} .interactive-input-editor:visible`;
/** Pending tool confirmations are shown in this card above the input (a copy sits hidden in the list). */
const CONFIRMATION = '.chat-tool-confirmation-carousel';
const MODAL = '.monaco-dialog-box';

/** Waits for `locator`, failing with a sentence that says what did not appear. */
export async function expectShown(locator, what, timeout = 30_000) {
	try {
		await locator.waitFor({ timeout });
	} catch {
		throw new Error(`Timed out after ${timeout / 1000} s waiting for ${what}.`);
	}
	return locator;
}

/**
 * Opens the chat view in agent mode with `model` selected. A fresh profile starts with the built-in
 * Copilot Chat extension switched off ("chat setup not completed"); opening the Language Models
 * editor once switches it on and lists the contributed models, after which the model and the Agent
 * mode are picked by themselves. Until Copilot Chat has activated, though, a prompt goes to VS
 * Code's setup agent, which asks to sign in: `copilotActive()` must resolve once it has.
 */
export async function openAgentChat(page, model, copilotActive) {
	await runCommand(page, 'Chat: Manage Language Models');
	const models = page.locator('.monaco-modal-editor-block');
	await expectShown(models.getByText(model).first(), `"${model}" in the Language Models editor (is the test extension loaded?)`);
	await page.keyboard.press('Escape');
	await models.waitFor({ state: 'detached', timeout: 5000 });
	await copilotActive();
	await runCommand(page, 'Chat: Open Chat');
	await expectShown(page.locator(`${CHAT} .interactive-input-part .chat-input-picker-label`, { hasText: model }).first(), `the chat's model picker to show "${model}"`);
	await expectShown(page.locator(`${CHAT} .interactive-input-part .action-label`, { hasText: /^Agent$/ }).first(), 'the chat to be in Agent mode');
	// A notice about "BYOK utility models" (no Copilot sign-in) sits over the transcript.
	const notice = page.locator(`${CHAT} .action-label[aria-label="Dismiss notification"]:visible`);
	if (await notice.count()) await notice.first().click();
}

/** Sends `prompt` in a new chat (the scripted model reads the latest scenario; a new chat keeps earlier turns out). */
export async function sendInNewChat(page, prompt) {
	const transcript = page.locator(TRANSCRIPT);
	if (await transcript.locator('.interactive-request').count()) {
		await page.locator('.part.auxiliarybar .title-actions .action-label[aria-label^="New Chat"]').first().click();
		await transcript.locator('.interactive-request').first().waitFor({ state: 'detached', timeout: 10_000 });
	}
	const input = await expectShown(page.locator(INPUT), 'the chat input');
	await input.click();
	await page.keyboard.insertText(prompt);
	await page.keyboard.press('Enter');
}

/** An element's text as a person reads it (code blocks render spaces as no-break spaces). */
export async function shownText(locator) {
	return (await locator.innerText()).replace(/\u00a0/g, ' ');
}

/** The pending tool confirmation in chat, once shown. */
export function toolConfirmation(page, what) {
	return expectShown(page.locator(CONFIRMATION), `the chat's confirmation of ${what}`);
}

/**
 * Answers the pending chat confirmation: 'Skip', or one of the allowances — the primary button is
 * "Allow in this Session"; its dropdown holds "Allow Once", "Allow in this Workspace", "Always Allow".
 */
export async function answerConfirmation(page, choice) {
	const card = page.locator(CONFIRMATION);
	const buttons = card.locator('.chat-confirmation-widget-buttons');
	if (choice === 'Skip' || choice === 'Allow in this Session') {
		await buttons.locator('.monaco-button', { hasText: choice }).first().click();
	} else {
		await buttons.locator('.monaco-dropdown-button').first().click();
		// An earlier menu can linger hidden in the page: only the shown one counts.
		const item = page.locator('.context-view .action-label:visible', { hasText: choice }).first();
		await expectShown(item, `"${choice}" in the Allow button's menu`, 5000);
		// A click right after the menu opens can go unheeded (seen about one time in three): a person
		// who clicks again sees the menu close.
		for (let attempt = 1; ; attempt++) {
			await item.click();
			try {
				await item.waitFor({ state: 'hidden', timeout: 1000 });
				break;
			} catch (error) {
				if (attempt === 3) throw new Error(`"${choice}" in the Allow button's menu did not respond to three clicks.`, { cause: error });
			}
		}
	}
	await card.waitFor({ state: 'detached', timeout: 10_000 });
}

/**
 * What appears next while the agent runs: a chat confirmation or a modal dialog (Toolbelt asking for
 * itself). Returns 'chat' or 'modal'.
 */
export async function nextQuestion(page, what) {
	const either = page.locator(`${CONFIRMATION}, ${MODAL}`).first();
	await expectShown(either, `a confirmation in chat or a modal dialog for ${what}`);
	return (await page.locator(MODAL).count()) ? 'modal' : 'chat';
}

/**
 * What appears first once a prompt is sent: a confirmation in chat ('chat') or the response showing
 * `answer` ('answer'), for tools that may or may not ask.
 */
export async function confirmationOrAnswer(page, answer, what) {
	await expectShown(page.locator(CONFIRMATION).or(page.locator(TRANSCRIPT).getByText(answer)).first(), `a confirmation in chat or the answer for ${what}`);
	return (await page.locator(CONFIRMATION).count()) ? 'chat' : 'answer';
}

/**
 * Undoes every edit of chat's editing session as a person does: the "Undo" button above the chat
 * input, then "Yes" in the question it asks.
 */
export async function undoChatEdits(page) {
	const buttons = `${CHAT} :is(.action-label, .monaco-button)`;
	const undo = page.locator(`${buttons}:visible`).filter({ hasText: /^Undo$/ }).or(page.locator(`${buttons}[aria-label^="Undo All Edits"]:visible`)).first();
	await (await expectShown(undo, 'chat\'s "Undo" button over the input (its editing session)', 10_000)).click();
	const box = page.locator(MODAL);
	await expectShown(box, 'chat\'s question "Undo all edits?"', 5000);
	await box.locator('.dialog-buttons .monaco-button', { hasText: 'Yes' }).first().click();
	await box.waitFor({ state: 'detached' });
}

/** Waits until the response shows `text` (the scripted model's closing answer names its scenario). */
export function answerShown(page, text) {
	return expectShown(page.locator(TRANSCRIPT).getByText(text).first(), `the model's answer "${text}" in the chat`);
}

/** The shown conversation as text, for failure reports. */
export async function transcriptText(page) {
	return page.locator(TRANSCRIPT).innerText({ timeout: 2000 });
}

/** Opens the tool picker (the chat input's "Configure Tools..." button). */
export async function openToolPicker(page) {
	await page.locator(`${CHAT} .interactive-input-part .action-label[aria-label="Configure Tools..."]:visible`).first().click();
	await expectShown(page.locator('.quick-input-widget .monaco-list-row').first(), 'the tool picker');
}
