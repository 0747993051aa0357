package demo

import (
	"bytes"
	"compress/gzip"
	_ "embed" // the airports data set
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
)

// Airport is the demo entity: one OpenFlights airport. People may edit
// Notes and Altitude on the Airport_Input tab; everything else is owned by
// the application. Contact is a person's data (personal, sealed with the
// key of Manager, the data subject): the sheet shows it readable until
// the demo erases one manager (docs/erasure.md).
type Airport struct {
	ID        string  `hikoutei:"id,pk"`
	Name      string  `hikoutei:"name"`
	City      string  `hikoutei:"city"`
	Country   string  `hikoutei:"country"`
	IATA      string  `hikoutei:"iata"`
	ICAO      string  `hikoutei:"icao"`
	Latitude  float64 `hikoutei:"latitude"`
	Longitude float64 `hikoutei:"longitude"`
	Altitude  int64   `hikoutei:"altitude,user"`
	Timezone  float64 `hikoutei:"timezone"`
	DST       string  `hikoutei:"dst"`
	TZ        string  `hikoutei:"tz"`
	Type      string  `hikoutei:"type"`
	Source    string  `hikoutei:"source"`
	Notes     string  `hikoutei:"notes,user"`
	Manager   string  `hikoutei:"manager,subject"`
	Contact   string  `hikoutei:"contact,personal"`
}

type airportJSON struct {
	ID        int64   `json:"id"`
	Name      string  `json:"name"`
	City      string  `json:"city"`
	Country   string  `json:"country"`
	IATA      string  `json:"iata"`
	ICAO      string  `json:"icao"`
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
	Altitude  int64   `json:"altitude"`
	Timezone  any     `json:"timezone"`
	DST       string  `json:"dst"`
	TZ        string  `json:"tz"`
	Type      string  `json:"type"`
	Source    string  `json:"source"`
}

// embeddedAirports is testdata/data/airports.json, gzipped, so the demo
// runs from any directory (TestEmbeddedAirportsAreTheTestdataCopy keeps
// the two equal). Only cmd/hikoutei links this package.
//
//go:embed data/airports.json.gz
var embeddedAirports []byte

// LoadAirports reads the OpenFlights data set (a JSON array) from path,
// or the copy built into the binary when path is "".
func LoadAirports(path string) ([]Airport, error) {
	data, err := airportsJSON(path)
	if err != nil {
		return nil, err
	}
	if path == "" {
		path = "the embedded airports"
	}
	var raw []airportJSON
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := make([]Airport, len(raw))
	for i, r := range raw {
		out[i] = Airport{ID: strconv.FormatInt(r.ID, 10), Name: r.Name, City: r.City, Country: r.Country, IATA: r.IATA,
			ICAO: r.ICAO, Latitude: r.Latitude, Longitude: r.Longitude, Altitude: r.Altitude, Timezone: number(r.Timezone),
			DST: r.DST, TZ: r.TZ, Type: r.Type, Source: r.Source}
		out[i].Manager, out[i].Contact = manager(out[i].ID)
	}
	return out, nil
}

// manager makes up the duty manager of airport id (the data set has
// none): an opaque id, the data subject, and their e-mail address.
func manager(id string) (subject, contact string) {
	return "mgr-" + id, "duty.manager." + id + "@airport.example.invalid"
}

// number accepts the data set's time zone offsets, given as numbers or
// numeric strings ("\\N" and blanks become 0).
func number(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case string:
		f, _ := strconv.ParseFloat(x, 64)
		return f
	}
	return 0
}

// airportsJSON reads path, or unpacks the embedded copy.
func airportsJSON(path string) ([]byte, error) {
	if path != "" {
		return os.ReadFile(path)
	}
	zr, err := gzip.NewReader(bytes.NewReader(embeddedAirports))
	if err != nil {
		return nil, fmt.Errorf("the embedded airports: %w", err)
	}
	defer zr.Close()
	return io.ReadAll(zr)
}
