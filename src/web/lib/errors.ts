import { notifications } from '@mantine/notifications';
import { ApiError } from './api.ts';

export function errorMessage(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  if (error instanceof Error && error.message) return error.message;
  return 'Something went wrong. Try again.';
}

export function errorCode(error: unknown): string | null {
  return error instanceof ApiError ? error.code : null;
}

export function errorStatus(error: unknown): number | null {
  return error instanceof ApiError ? error.status : null;
}

export function notifyError(error: unknown, title = 'That did not work'): void {
  notifications.show({ color: 'red', title, message: errorMessage(error), autoClose: 8000 });
}

export function notifySuccess(message: string, title?: string): void {
  notifications.show({ color: 'green', title, message, autoClose: 4000 });
}
