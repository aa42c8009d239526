// Mantine theme: indigo primary at shades that keep white text at WCAG AA contrast, darker
// "dimmed" text and darker light-variant text for the colours we use in badges and alerts.
import { createTheme, type CSSVariablesResolver } from '@mantine/core';

export const theme = createTheme({
  primaryColor: 'indigo',
  primaryShade: { light: 8, dark: 8 },
  autoContrast: true,
  defaultRadius: 'md',
  cursorType: 'pointer',
  focusRing: 'auto',
  respectReducedMotion: true,
  headings: { fontWeight: '650' },
  components: {
    // Required fields are announced (aria-required) and validated, but carry no "*" in the label:
    // nearly every field here is required, and a bare label keeps exact label matching simple.
    TextInput: { defaultProps: { withAsterisk: false } },
    PasswordInput: { defaultProps: { withAsterisk: false } },
    NumberInput: { defaultProps: { withAsterisk: false } },
    NativeSelect: { defaultProps: { withAsterisk: false } },
    Button: { defaultProps: { fw: 600 } },
    Table: { defaultProps: { verticalSpacing: 'sm', highlightOnHover: true } },
    // Close buttons are icon-only: give them names (axe button-name).
    Notification: { defaultProps: { closeButtonProps: { 'aria-label': 'Close notification' } } },
    Modal: { defaultProps: { closeButtonProps: { 'aria-label': 'Close dialog' } } },
  },
});

export const cssVariablesResolver: CSSVariablesResolver = () => ({
  variables: {},
  light: {
    '--mantine-color-dimmed': 'var(--mantine-color-gray-7)',
    '--mantine-color-error': 'var(--mantine-color-red-9)',
    // gray-6 is below 4.5:1 on white; FileInput shows its placeholder as text, which axe checks.
    '--mantine-color-placeholder': 'var(--mantine-color-gray-7)',
    '--mantine-color-green-light-color': '#1e6b30',
    '--mantine-color-yellow-light-color': '#7a4400',
    '--mantine-color-orange-light-color': '#a13a08',
    '--mantine-color-teal-light-color': '#066649',
    '--mantine-color-cyan-light-color': '#0a5c6b',
  },
  dark: {},
});
