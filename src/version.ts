/** The package version, used in `adcp_error.sdk_id` ("adcp-buyer-gateway@<version>"). A test keeps it equal to package.json's. */
export const VERSION = '0.1.0';
export const SDK_ID = `adcp-buyer-gateway@${VERSION}`;
