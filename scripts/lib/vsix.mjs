/** The file name of the .vsix for a vsce target (`linux-x64`): each carries its platform in its name. */
export function vsixName(target) {
	return `toolbelt-${target}.vsix`;
}
