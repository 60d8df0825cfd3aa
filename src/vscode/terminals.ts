import * as vscode from 'vscode';
import type { SharedState } from '../core/context';
import type { Session, SessionManager } from '../core/commands/sessions';

/**
 * Every interactive session the model starts is mirrored live in a VS Code terminal named after
 * its command, so the person sees what runs and can type into it too. Closing that terminal stops
 * the session; deactivating the extension stops them all.
 */

/** Characters of a command shown in a terminal's name. */
const NAME_CHARS = 40;

/** Test-only (extension-test mode): runs exactly what deactivation runs, and resolves when it is done. */
export const SIMULATE_DEACTIVATE_COMMAND = 'toolbelt.test.stopSessionsAsOnDeactivate';

export interface SessionTerminals extends vscode.Disposable {
	/** Stops every session and closes their terminals; resolves when they are gone (the same promise each time). */
	stopAll(): Promise<void>;
}

/**
 * Mirrors the registry's sessions until disposed. Disposal cannot be awaited: `deactivate()`
 * returns `stopAll()`, the same promise, and VS Code waits for that.
 */
export function registerSessionTerminals(context: vscode.ExtensionContext, state: SharedState): SessionTerminals {
	const { sessions } = state;
	const terminals = new Map<number, vscode.Terminal>();
	const listener = sessions.onDidStart(session => terminals.set(session.id, mirror(session, () => terminals.delete(session.id))));
	let shutdown: Promise<void> | undefined;
	const stopAll = () => (shutdown ??= stopEverything(sessions, terminals, listener));
	const simulate = context.extensionMode === vscode.ExtensionMode.Test ? vscode.commands.registerCommand(SIMULATE_DEACTIVATE_COMMAND, stopAll) : undefined;
	return {
		stopAll,
		dispose: () => {
			simulate?.dispose();
			void stopAll();
		},
	};
}

async function stopEverything(sessions: SessionManager, terminals: Map<number, vscode.Terminal>, listener: { dispose(): void }): Promise<void> {
	listener.dispose();
	await sessions.dispose();
	for (const terminal of terminals.values()) terminal.dispose();
	terminals.clear();
}

function terminalName(session: Session): string {
	const flat = session.command.replace(/\s+/g, ' ').trim();
	const short = flat.length > NAME_CHARS ? `${flat.slice(0, NAME_CHARS - 1)}…` : flat;
	return `Toolbelt #${session.id}: ${short}`;
}

/** One terminal showing one session: what it printed so far, then everything live. */
function mirror(session: Session, forget: () => void): vscode.Terminal {
	const write = new vscode.EventEmitter<string>();
	// Pipes give bare \n; a terminal needs \r\n to return to the left margin.
	const toTerminal = (text: string) => (session.tty ? text : text.replace(/\r?\n/g, '\r\n'));
	let opened = false;
	const subscriptions: { dispose(): void }[] = [];
	const pty: vscode.Pseudoterminal = {
		onDidWrite: write.event,
		open: () => {
			// Writes before open are dropped by VS Code: replay what the session kept.
			opened = true;
			write.fire(`\x1b[2m$ ${session.command.replace(/\n/g, '\r\n  ')}   (in ${session.options.displayCwd ?? session.options.cwd})\x1b[0m\r\n`);
			if (session.transcript) write.fire(toTerminal(session.transcript));
			if (!session.alive) write.fire(endLine(session));
		},
		close: () => {
			// The person closed the terminal: the session goes with it.
			for (const subscription of subscriptions) subscription.dispose();
			write.dispose();
			forget();
			if (session.alive) void session.kill('terminal closed');
		},
		handleInput: data => {
			// A pty echoes what is typed; pipes do not, so show the person their own typing.
			if (!session.tty && session.alive) write.fire(data.replace(/\r/g, '\r\n'));
			session.write(data);
		},
	};
	subscriptions.push(
		session.onData(text => { if (opened) write.fire(toTerminal(text)); }),
		session.onExit(() => { if (opened) write.fire(endLine(session)); }),
	);
	const terminal = vscode.window.createTerminal({ name: terminalName(session), pty, iconPath: new vscode.ThemeIcon('tools') });
	terminal.show(true);
	return terminal;
}

function endLine(session: Session): string {
	const exit = session.exit;
	const how = !exit ? 'ended' : exit.signal ? `was stopped by ${exit.signal}` : `exited with code ${exit.exitCode}`;
	const why = session.stopReason ? ` (${session.stopReason})` : '';
	return `\r\n\x1b[2m[session ${session.id} ${how}${why}]\x1b[0m\r\n`;
}
