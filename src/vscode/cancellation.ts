import type * as vscode from 'vscode';

/** The core speaks AbortSignal; VS Code hands us CancellationTokens. */
export function toAbortSignal(token: vscode.CancellationToken | undefined): AbortSignal {
	const controller = new AbortController();
	if (!token) return controller.signal;
	if (token.isCancellationRequested) controller.abort();
	else token.onCancellationRequested(() => controller.abort());
	return controller.signal;
}
