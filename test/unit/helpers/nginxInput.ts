// The nginx input the pulp-web config tests start from (components/web/nginx.ts): the program's Service
// names and ports, the default body limit, dual-stack, no content cache.
import { NginxInput } from "../../../components/web/nginx";

export const NGINX_INPUT: NginxInput = {
  apiHost: "pulp-api",
  apiPort: 24817,
  contentHost: "pulp-content",
  contentPort: 24816,
  contentPathPrefix: "/pulp/content/",
  clientMaxBodySize: "10g",
  listenIPv6: true,
};
