/**
 * Where definitions live, relative to each workspace folder. Apart from definitions.ts so that
 * `toolbelt list` can look for the folder without loading what reads and runs custom tools.
 */
export const DEFINITIONS_FOLDER = '.toolbelt/tools';
