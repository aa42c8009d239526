// Mantine components wired to TanStack Router links (client-side navigation, real <a href>).
import { Anchor, type AnchorProps, Button, type ButtonProps, NavLink, type NavLinkProps } from '@mantine/core';
import { createLink, type LinkComponent } from '@tanstack/react-router';
import type { ComponentPropsWithRef } from 'react';

type AnchorElProps = Omit<ComponentPropsWithRef<'a'>, 'color' | 'style'>;

function AnchorBase(props: AnchorProps & AnchorElProps) {
  return <Anchor component="a" {...props} />;
}
const CreatedAnchor = createLink(AnchorBase);
/** An inline text link to a route. */
export const TextLink: LinkComponent<typeof AnchorBase> = (props) => <CreatedAnchor preload="intent" {...props} />;

function ButtonBase(props: ButtonProps & AnchorElProps) {
  return <Button component="a" {...props} />;
}
const CreatedButton = createLink(ButtonBase);
/** A link styled as a button (navigation, not an action). */
export const ButtonLink: LinkComponent<typeof ButtonBase> = (props) => <CreatedButton preload="intent" {...props} />;

function NavLinkBase(props: NavLinkProps & AnchorElProps) {
  return <NavLink component="a" {...props} />;
}
const CreatedNavLink = createLink(NavLinkBase);
/** A navbar entry; highlighted (and aria-current) while its route or a child route is active. */
export const NavItem: LinkComponent<typeof NavLinkBase> = (props) => (
  <CreatedNavLink preload="intent" activeOptions={{ includeSearch: false }} activeProps={{ active: true }} {...props} />
);
