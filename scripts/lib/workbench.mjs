// Drives the VS Code workbench (the VS Code server's web UI in headless Chromium) the way a person
// does: command palette, quick picks, dialogs, views. Used by the end-to-end tests in test/e2e/.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { launchBrowser, remoteUri, startServer, tempDir } from './host.mjs';

/** Settings for a calm, reproducible window: no welcome page, no tips, no chat panel in the way. */
const QUIET_SETTINGS = {
	'workbench.startupEditor': 'none',
	'workbench.tips.enabled': false,
	'workbench.secondarySideBar.defaultVisibility': 'hidden',
	'workbench.colorTheme': 'Default Dark Modern',
	'window.commandCenter': false,
	'editor.minimap.enabled': false,
	'git.enabled': false,
	'extensions.ignoreRecommendations': true,
	'update.mode': 'none',
	'telemetry.telemetryLevel': 'off',
	'chat.commandCenter.enabled': false,
};

/**
 * Starts a server on `folder` with the repository as the development extension (and no tests, so
 * real dialogs appear), opens the workbench, and waits until it is ready. `extensions` are more
 * folders to load for development beside it (a test extension); `extensionEnvironment` is added to
 * the extension host's environment.
 */
export async function openWorkbench({ folder, extensionDevelopmentPath, extensions = [], extensionEnvironment = {}, workspaceTrust = false, settings = {}, viewport = { width: 1400, height: 860 } }) {
	const profile = tempDir('toolbelt-e2e-profile-');
	const userDataDir = path.join(profile, 'user');
	fs.mkdirSync(path.join(userDataDir, 'User'), { recursive: true });
	fs.writeFileSync(path.join(userDataDir, 'User', 'settings.json'), JSON.stringify({ ...QUIET_SETTINGS, ...settings }, null, '\t'));
	const server = await startServer({ folder, workspaceTrust, userDataDir, extensionsDir: path.join(profile, 'extensions'), serverDataDir: path.join(profile, 'server') });
	const browser = await launchBrowser();
	const page = await browser.newPage({ viewport });
	const logs = [];
	page.on('console', message => logs.push(`[${message.type()}] ${message.text()}`));
	page.on('pageerror', error => logs.push(`[pageerror] ${error.message}`));
	const developmentPath = extensions.length ? linkFolder(path.join(profile, 'development'), [extensionDevelopmentPath, ...extensions]) : extensionDevelopmentPath;
	const payload = [
		['extensionDevelopmentPath', remoteUri(server.port, developmentPath)],
		['extensionEnvironment', JSON.stringify(extensionEnvironment)],
		['skipWelcome', 'true'],
		['skipReleaseNotes', 'true'],
	];
	const query = new URLSearchParams({ folder: path.resolve(folder), payload: JSON.stringify(payload) });
	await page.goto(`http://127.0.0.1:${server.port}/?${query}`, { waitUntil: 'domcontentloaded' });
	await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
	await page.locator('.activitybar').waitFor({ timeout: 60_000 });
	return {
		page,
		logs,
		async close() {
			await browser.close().catch(() => {});
			await server.stop();
		},
	};
}

/**
 * The workbench keeps one extensionDevelopmentPath from the payload (the pairs become a map), but a
 * folder without a package.json is scanned for extensions: one link per extension folder loads all.
 */
export function linkFolder(dir, extensionFolders) {
	fs.mkdirSync(dir);
	extensionFolders.forEach((folder, index) => fs.symlinkSync(path.resolve(folder), path.join(dir, `${index}-${path.basename(path.resolve(folder))}`)));
	return dir;
}

const QUICK_INPUT = '.quick-input-widget';

const PALETTE_INPUT = `${QUICK_INPUT} input[placeholder="Type the name of a command to run."]`;

/**
 * Opens the command palette with `text` typed and waits for the row `expect`. Right after start-up
 * the palette may not list an extension's commands yet, and a palette opened while the previous
 * quick input is still closing closes with it: both get another try.
 */
export async function openPalette(page, text, expect) {
	for (let attempt = 1; ; attempt++) {
		await page.locator(QUICK_INPUT).waitFor({ state: 'hidden' }).catch(() => {});
		await page.keyboard.press('F1');
		try {
			const input = page.locator(PALETTE_INPUT);
			await input.waitFor({ state: 'visible', timeout: 5000 });
			await input.fill(`>${text}`);
			await quickPickRow(page, expect).waitFor({ state: 'visible', timeout: attempt < 4 ? 5000 : 30_000 });
			return;
		} catch (error) {
			if (attempt >= 4) throw error;
			await page.keyboard.press('Escape');
		}
	}
}

/** Runs a command from the command palette by its full title (`Toolbelt: Run Tool…`). */
export async function runCommand(page, title) {
	await openPalette(page, title, title);
	await quickPickRow(page, title).click();
	// The widget is reused by whatever the command shows next: wait until it is no longer the palette.
	await page.locator(PALETTE_INPUT).waitFor({ state: 'hidden' });
}

/** The row of the open quick pick whose label starts with `label`. */
export function quickPickRow(page, label) {
	return page.locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row`).filter({ hasText: label }).first();
}

/** Filters the open quick pick, waits for `label` to be the first match, and accepts it. */
export async function pick(page, label, filter = label) {
	const input = page.locator(`${QUICK_INPUT} input`);
	await input.waitFor({ state: 'visible' });
	await input.fill(filter);
	await quickPickRow(page, label).click();
}

/** Types an answer into the open input box (after its title shows `title`) and accepts it. */
export async function answer(page, title, text) {
	await page.locator(`${QUICK_INPUT} .quick-input-title`).filter({ hasText: title }).waitFor();
	const input = page.locator(`${QUICK_INPUT} input`);
	await input.waitFor({ state: 'visible' });
	await input.fill(text);
	await page.keyboard.press('Enter');
}

/** The modal dialog, once it is open. */
export async function dialog(page) {
	const box = page.locator('.monaco-dialog-box');
	await box.waitFor();
	return box;
}

export async function clickDialogButton(page, label) {
	const box = await dialog(page);
	await box.locator('.dialog-buttons .monaco-button', { hasText: label }).first().click();
	await box.waitFor({ state: 'detached' });
}

/**
 * Waits for a notification whose text matches. The smoke-test driver keeps toasts off screen, but
 * every notification is still announced to screen readers through the workbench's aria alert.
 */
export async function notification(page, pattern) {
	const shown = page.locator('.notifications-toasts .notification-toast, .monaco-aria-container .monaco-alert').filter({ hasText: pattern }).first();
	await shown.waitFor({ state: 'attached' });
	return shown;
}

export async function dismissNotifications(page) {
	await runCommand(page, 'Notifications: Clear All Notifications').catch(() => {});
}

/** Waits until `probe()` returns something truthy (a file's state, usually). */
export async function until(what, probe, timeoutMs = 15_000) {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const value = await probe();
		if (value) return value;
		if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs / 1000} s waiting for ${what}`);
		await new Promise(resolve => setTimeout(resolve, 100));
	}
}

/** Drags the side bar's edge so it is `width` pixels wide (its content stays readable in screenshots). */
export function resizeSideBar(page, width) {
	return resizePart(page, '.part.sidebar', 'right', width);
}

/** Drags the secondary side bar's (the chat's) inner edge so it is `width` pixels wide. */
export function resizeSecondarySideBar(page, width) {
	return resizePart(page, '.part.auxiliarybar', 'left', width);
}

async function resizePart(page, selector, edgeSide, width) {
	const part = await page.locator(selector).boundingBox();
	if (!part) return;
	const edge = edgeSide === 'right' ? part.x + part.width : part.x;
	const sashes = await page.locator('.monaco-sash.vertical').all();
	for (const sash of sashes) {
		const box = await sash.boundingBox();
		if (!box || Math.abs(box.x + box.width / 2 - edge) > 6 || box.height < part.height / 2) continue;
		const y = box.y + box.height / 2;
		await page.mouse.move(box.x + box.width / 2, y);
		await page.mouse.down();
		await page.mouse.move(edgeSide === 'right' ? part.x + width : part.x + part.width - width, y, { steps: 8 });
		await page.mouse.up();
		return;
	}
}
