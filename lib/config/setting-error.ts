/** One refused setting; its own file so each settings parser can name it without importing the whole of settings.ts. */
export interface SettingError {
  name: string;
  message: string;
}
